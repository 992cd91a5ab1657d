package scenarios_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/verdict"
)

// jsonRPCFront answers what the API behind it answers, the JSON-RPC way: always 200, the
// body as the result of a success, a refusal as an error object with a code.
func jsonRPCFront(t *testing.T, api string) string {
	t.Helper()
	codes := map[int]int{409: -32010, 422: -32011, 400: -32012}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, api+r.URL.RequestURI(), bytes.NewReader(body))
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		if r.Method != http.MethodPost {
			w.WriteHeader(resp.StatusCode)
			_, _ = w.Write(out)
			return
		}
		for _, h := range []string{"Retry-After", "Idempotent-Replayed"} {
			if v := resp.Header.Get(h); v != "" {
				w.Header().Set(h, v)
			}
		}
		w.Header().Set("Content-Type", "application/json")
		switch code, known := codes[resp.StatusCode]; {
		case resp.StatusCode < 300:
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"result":%s}`, bytes.TrimSpace(out))
		case resp.StatusCode >= 500:
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"internal error"}}`)
		case known:
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"error":{"code":%d,"message":%q}}`, code, http.StatusText(resp.StatusCode))
		default:
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":%q}}`, http.StatusText(resp.StatusCode))
		}
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

func keyInArguments(body map[string]any) (string, bool) {
	params, _ := body["params"].(map[string]any)
	args, _ := params["arguments"].(map[string]any)
	k, ok := args["idempotency_key"].(string)
	return k, ok
}

// The JSON-RPC example of docs/profiles.md, refusing inside a 200 and classified by its
// outcome rules, gets the verdicts the same server gets when it answers with statuses.
func TestJSONRPCRefusalsInside200GiveTheVerdictsOfStatuses(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	t.Setenv("TOOLS_TOKEN", "secret")
	// The documented profiles, with the fake's slow hook for the in-flight scenarios.
	load := func(file, base string) *profile.Profile {
		doc, err := os.ReadFile(filepath.Join("..", "profile", "testdata", file))
		require.NoError(t, err)
		doc = append(doc, "slow_operation: {header: X-Test-Delay, value: 300ms}\nclient_timeout: 5s\n"...)
		p, err := profile.Parse(file, doc)
		require.NoError(t, err)
		p.BaseURL = base
		return p
	}
	statuses := load("refund-tool.yaml", startFake(t, &fakeRefunds{keyField: keyInArguments}))
	rpc := load("refund-tool-jsonrpc.yaml", jsonRPCFront(t, startFake(t, &fakeRefunds{keyField: keyInArguments})))
	set := []string{"replay/*", "before/*", "race/concurrent-pair", "race/burst-50", "race/in-flight-*", "race/duplicate-*", "fingerprint/*", "key/*"}
	rep, err := scenarios.Run(ctx, scenarios.RunConfig{Profiles: []*profile.Profile{statuses, rpc}, Only: set, Seed: 11})
	require.NoError(t, err)
	byTarget := map[string]map[string]verdict.Result{}
	for _, r := range rep.Results {
		if byTarget[r.Target] == nil {
			byTarget[r.Target] = map[string]verdict.Result{}
		}
		byTarget[r.Target][r.ScenarioID] = r
	}
	want, got := byTarget[statuses.Name], byTarget[rpc.Name]
	require.Len(t, got, len(want))
	compared, passed := 0, 0
	for id, w := range want {
		g := got[id]
		compared++
		if id == "race/in-flight-retry-after" {
			// This server's refusal inside a 200 carries Retry-After as its twin's 409 does:
			// it is judged by it.
			require.Contains(t, g.Message, "a 200 the profile's outcome rules recognise) carries Retry-After")
		}
		if pi := func(v verdict.Verdict) bool { return v == verdict.Pass || v == verdict.Info }; strings.HasPrefix(id, "race/burst-") && pi(w.Verdict) && pi(g.Verdict) {
			// A burst against a fast fake is INFO when no copy happened to be caught in
			// flight, PASS when one was: the machine's timing, not the transport.
			continue
		}
		require.Equal(t, w.Verdict, g.Verdict, "%s: statuses %s (%s), JSON-RPC %s (%s)", id, w.Verdict, w.Message, g.Verdict, g.Message)
		if w.Verdict == verdict.Pass {
			passed++
		}
	}
	require.GreaterOrEqual(t, compared, 35)
	require.GreaterOrEqual(t, passed, 25, "the comparison must be between verdicts that proved something")
}

// The JSON-RPC profile of that test is the one docs/profiles.md shows.
func TestDocsShowTheJSONRPCProfile(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../docs/profiles.md")
	require.NoError(t, err)
	yml, err := os.ReadFile(filepath.Join("..", "profile", "testdata", "refund-tool-jsonrpc.yaml"))
	require.NoError(t, err)
	require.True(t, strings.Contains(string(doc), "```yaml\n"+string(yml)+"```"), "docs/profiles.md must show profile/testdata/refund-tool-jsonrpc.yaml verbatim")
}

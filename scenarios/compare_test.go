package scenarios_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/verdict"
)

// reshaped serves a correct fake through a layer that changes how its answers travel but
// not what they say, as real APIs do: gzip with another header time per response when the
// request accepts it, a replay re-serialized with its members in another order, and a
// request id minted per response.
type reshaped struct {
	next      http.Handler
	gzip      bool
	reorder   bool
	requestID bool
	// replayStatus, when set, is the status of every replay (PayPal's 200 after a 201).
	replayStatus int
	served       atomic.Int64
}

func (s *reshaped) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := httptest.NewRecorder()
	s.next.ServeHTTP(rec, r)
	body := rec.Body.Bytes()
	n := s.served.Add(1)
	var doc map[string]any
	if (s.reorder || s.requestID) && json.Unmarshal(body, &doc) == nil && r.Method == http.MethodPost {
		if s.requestID {
			doc["request_id"] = fmt.Sprintf("req_%d", n)
		}
		body, _ = json.Marshal(doc) // sorted members
		if s.reorder && rec.Header().Get("Idempotent-Replayed") != "" {
			body = reverseMembers(doc)
		}
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	if s.gzip && strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, int(n%9)+1)
		zw.ModTime = time.Unix(n, 0)
		_, _ = zw.Write(body)
		_ = zw.Close()
		body = b.Bytes()
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Vary", "Accept-Encoding")
	}
	w.Header().Del("Content-Length")
	if s.replayStatus != 0 && rec.Code < 300 && rec.Header().Get("Idempotent-Replayed") != "" {
		rec.Code = s.replayStatus
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(body)
}

// reverseMembers writes a flat JSON object with its members in reverse name order.
func reverseMembers(doc map[string]any) []byte {
	sorted, _ := json.Marshal(doc)
	var keys []string
	dec := json.NewDecoder(bytes.NewReader(sorted))
	_, _ = dec.Token()
	for dec.More() {
		k, _ := dec.Token()
		keys = append(keys, k.(string))
		var skip json.RawMessage
		_ = dec.Decode(&skip)
	}
	var b bytes.Buffer
	b.WriteString("{ ")
	for i := len(keys) - 1; i >= 0; i-- {
		v, _ := json.Marshal(doc[keys[i]])
		fmt.Fprintf(&b, "%q: %s", keys[i], v)
		if i > 0 {
			b.WriteString(", ")
		}
	}
	b.WriteString(" }")
	return b.Bytes()
}

// patientProfile is fakeProfile with a client timeout no loaded machine reaches: the
// scenarios these tests run hold nothing past it, and an attempt that timed out would be
// UNKNOWN (rightly), not the PASS or FAIL the comparison is about.
func patientProfile(t *testing.T, baseURL string) *profile.Profile {
	t.Helper()
	p := fakeProfile(t, baseURL)
	p.ClientTimeout = profile.Duration(10 * time.Second)
	return p
}

func startReshaped(t *testing.T, s *reshaped) string {
	t.Helper()
	inner := &fakeRefunds{}
	startFake(t, inner) // sets the fake up; its own listener goes unused
	s.next = inner
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv.URL
}

func runOn(t *testing.T, p *profile.Profile, only ...string) map[string]verdict.Result {
	t.Helper()
	return runConfigured(t, 90*time.Second, scenarios.RunConfig{Profiles: []*profile.Profile{p}, Only: only, NoPreflight: true, Seed: 1})
}

// runConfigured runs cfg within limit and returns its results by scenario ID.
func runConfigured(t *testing.T, limit time.Duration, cfg scenarios.RunConfig) map[string]verdict.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	rep, err := scenarios.Run(ctx, cfg)
	require.NoError(t, err)
	out := map[string]verdict.Result{}
	for _, r := range rep.Results {
		out[r.ScenarioID] = r
	}
	return out
}

var replaySet = []string{"replay/sequential", "replay/after-503", "replay/after-reset", "replay/lost-twice", "replay/fidelity-body", "race/burst-50", "fingerprint/original-intact"}

func TestGzippedAnswersAreComparedByWhatTheySay(t *testing.T) {
	t.Parallel()
	p := patientProfile(t, startReshaped(t, &reshaped{gzip: true}))
	p.Operation.Headers = map[string]string{"Accept-Encoding": "gzip"}
	p.SideEffects.Headers = map[string]string{"Accept-Encoding": "gzip"} // the ledger answers gzipped too
	for id, r := range runOn(t, p, replaySet...) {
		requirePassOrUnrefusedBurst(t, id, r)
	}
}

// A target whose replays answer 200 after the 201 that executed (PayPal) is told the
// difference is the status alone and how to declare it; declared, it passes.
func TestAReplayStatusOfItsOwnIsNamedAndCanBeDeclared(t *testing.T) {
	t.Parallel()
	url := startReshaped(t, &reshaped{replayStatus: http.StatusOK})
	p := patientProfile(t, url)
	undeclared := runOn(t, p, "replay/sequential", "race/burst-50")
	r := undeclared["replay/sequential"]
	require.Equal(t, verdict.Fail, r.Verdict, r.Message)
	require.Contains(t, r.Message, "status 200, the committed 201, with the same body; a target whose replays answer 200 declares expect.replay_status: 200")
	r = undeclared["race/burst-50"]
	require.Equal(t, verdict.Fail, r.Verdict, r.Message)
	require.Contains(t, r.Message, "different responses for 1 side effect(s) (status 200, the execution's 201, with the same body; a target whose replays answer 200 declares expect.replay_status: 200)")

	p = patientProfile(t, url)
	p.Expect.ReplayStatus = http.StatusOK
	for id, r := range runOn(t, p, replaySet...) {
		requirePassOrUnrefusedBurst(t, id, r)
	}
}

func TestAReplayReserializedIsTheSameBodyAndOnlyFidelityAsksForTheBytes(t *testing.T) {
	t.Parallel()
	p := patientProfile(t, startReshaped(t, &reshaped{reorder: true}))
	results := runOn(t, p, replaySet...)
	for id, r := range results {
		if id == "replay/fidelity-body" {
			continue
		}
		requirePassOrUnrefusedBurst(t, id, r)
	}
	fid := results["replay/fidelity-body"]
	require.Equal(t, verdict.NonStrict, fid.Verdict, fid.Message)
	require.Contains(t, fid.Message, "the committed JSON value (201) but not its bytes")
	require.Contains(t, fid.Message, "declare expect.replay_body: json")

	p.Expect.ReplayBody = "json"
	fid = runOn(t, p, "replay/fidelity-body")["replay/fidelity-body"]
	require.Equal(t, verdict.Pass, fid.Verdict, fid.Message)
	require.Contains(t, fid.Message, "re-serialized as declared")
}

func TestAVolatileMemberIsADivergenceUntilItIsDeclared(t *testing.T) {
	t.Parallel()
	p := patientProfile(t, startReshaped(t, &reshaped{requestID: true}))
	r := runOn(t, p, "replay/sequential")["replay/sequential"]
	require.Equal(t, verdict.Fail, r.Verdict, "undeclared, a changed member is a changed replay")
	require.Contains(t, r.Message, "request_id changed")
	require.Contains(t, r.Message, "expect.volatile_fields")

	p.Expect.VolatileFields = []string{"request_id"}
	for id, r := range runOn(t, p, replaySet...) {
		requirePassOrUnrefusedBurst(t, id, r)
	}
}

func TestProfileRefusesCodingsItCannotUndoAndContradictoryFields(t *testing.T) {
	t.Parallel()
	base := "name: x\nbase_url: http://127.0.0.1:1\noperation: {path: /v1/refunds, body: '{\"order_id\": \"{{.Entity}}\"}', headers: {%s}}\nside_effects: {path: '/c?o={{.Entity}}', count: count}\nexpect: {in_flight: 409, mismatch: 422, missing_key: \"400\"%s}\n"
	for _, tc := range []struct{ headers, expect, want string }{
		{`Accept-Encoding: "br, gzip"`, "", `asks for "br", which idemproof does not decode`},
		{`Accept-Encoding: "*"`, "", `lets the target choose any coding`},
		{`X-A: b`, ", volatile_fields: [id], unique_field: id", `"id" is also expect.unique_field`},
		{`X-A: b`, ", replay_body: text", `expect.replay_body: must be bytes`},
		{`X-A: b`, ", replay_status: 409", `expect.replay_status: must be a 2xx status (the status a replay of a success answers with, e.g. 200 after a 201), got 409`},
	} {
		_, err := profile.Parse("x.yaml", []byte(fmt.Sprintf(base, tc.headers, tc.expect)))
		require.ErrorContains(t, err, tc.want)
	}
	for _, ok := range []string{`Accept-Encoding: "gzip, deflate;q=0.5, br;q=0"`, `Accept-Encoding: identity`} {
		_, err := profile.Parse("x.yaml", []byte(fmt.Sprintf(base, ok, "")))
		require.NoError(t, err, ok)
	}
}

// requirePassOrUnrefusedBurst: a PASS, or for a burst against a fast fake also the INFO
// of a burst whose copies were served one after the other (none refused in flight):
// which of the two a run gets is the machine's timing.
func requirePassOrUnrefusedBurst(t *testing.T, id string, r verdict.Result) {
	t.Helper()
	if strings.HasPrefix(id, "race/burst-") && r.Verdict == verdict.Info {
		require.Contains(t, r.Message, "no copy was refused", "%s: %s", id, r.Message)
		return
	}
	require.Equal(t, verdict.Pass, r.Verdict, "%s: %s", id, r.Message)
}

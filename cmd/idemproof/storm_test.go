package main_test

import (
	"io"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/reference"
	"github.com/idemproof/idemproof/storm"
)

func TestStormFindsNothingWrongWithTheReferenceAndCatchesCheckThenSet(t *testing.T) {
	out, errOut, code := runCLI(t, "storm", "--ops", "200", "--seed", "4")
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	require.Contains(t, out, "storm: 200/200 operations", "a progress line")
	require.Contains(t, out, "duplicated 0, lost 0, fabricated 0, differs 0, failed 0")

	out, errOut, code = runCLI(t, "storm", "--flaw", "check-then-set", "--ops", "200", "--seed", "4")
	require.Equal(t, 1, code, "%s\n%s", out, errOut)
	require.Contains(t, out, "shrunk duplicated:")
	require.Contains(t, out, "repeat: idemproof storm --flaw check-then-set --schedule copies=2")
}

func TestStormShardsMergeIntoOneReport(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for _, part := range []string{"1/2", "2/2"} {
		file := filepath.Join(dir, strings.ReplaceAll(part, "/", "-")+".json")
		out, errOut, code := runCLI(t, "storm", "--ops", "60", "--seed", "9", "--shard", part, "--json", file)
		require.Equal(t, 0, code, "%s\n%s", out, errOut)
		files = append(files, file)
	}
	merged := filepath.Join(dir, "merged.json")
	out, errOut, code := runCLI(t, append([]string{"report", "merge", "--json", merged}, files...)...)
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	require.Contains(t, out, "shard(s) 1/2,2/2, seed 9: 60 of 60 operations")
	data, err := os.ReadFile(merged)
	require.NoError(t, err)
	rep, err := storm.ReadReport(data)
	require.NoError(t, err)
	require.Equal(t, 60, rep.Done)
}

func TestStormBadInputExitsTwoSayingWhatToFix(t *testing.T) {
	dir := t.TempDir()
	closed := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer ln.Close()
		return ln.Addr().String()
	}
	// A store that never answers: store.upstream unreachable.
	prof := filepath.Join(dir, "p.yaml")
	require.NoError(t, os.WriteFile(prof, []byte(`name: nowhere
base_url: http://`+closed()+`
key_header: Idempotency-Key
operation: {method: POST, path: /refunds, body: '{"order_id": "{{.Entity}}"}'}
side_effects: {method: GET, path: "/refunds?order_id={{.Entity}}", count: count}
expect: {in_flight: 409, mismatch: 422, missing_key: "400"}
store: {listen: "`+closed()+`", upstream: "`+closed()+`"}
`), 0o644))
	for _, cmd := range []string{"storm", "check"} {
		_, errOut, code := runCLI(t, cmd, "--profile", prof)
		require.Equal(t, 2, code, cmd)
		require.Contains(t, errOut, "does not accept connections (", cmd)
		require.Contains(t, errOut, "fix store.upstream", cmd)
	}

	// A reference whose keys are in memory never uses the store point its profile names.
	ref, err := reference.New()
	require.NoError(t, err)
	srv := httptest.NewServer(ref)
	t.Cleanup(func() { srv.Close(); ref.Close() })
	store, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() })
	go func() {
		for {
			c, err := store.Accept()
			if err != nil {
				return
			}
			go io.Copy(io.Discard, c)
		}
	}()
	require.NoError(t, os.WriteFile(prof, []byte(`name: memory-keys
base_url: `+srv.URL+`
key_header: Idempotency-Key
operation: {method: POST, path: /v1/refunds, body: '{"order_id": "{{.Entity}}", "amount": 4900}'}
side_effects: {method: GET, path: "/v1/refunds?order_id={{.Entity}}", count: count}
expect: {in_flight: 409, mismatch: 422, missing_key: "400"}
store: {listen: "`+closed()+`", upstream: "`+store.Addr().String()+`"}
`), 0o644))
	for cmd, extra := range map[string]string{"storm": "--ops=5", "check": "--only=store/*"} {
		_, errOut, code := runCLI(t, cmd, "--profile", prof, extra)
		require.Equal(t, 2, code, cmd)
		require.Contains(t, errOut, "the API never used store.listen", cmd)
	}

	_, errOut, code := runCLI(t, "storm", "--ops", "5", "--schedule", "copies=0")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--schedule: schedule \"copies=0\"")
	_, errOut, code = runCLI(t, "storm", "--shard", "3/2")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--shard")
}

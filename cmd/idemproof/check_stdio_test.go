package main_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/internal/proctest"
)

// A stdio server that crashes at start, prints something that is not JSON-RPC to its
// stdout, or never answers initialize stops check at the preflight: exit 2, its stderr
// in the message, and nothing it started left running (the test counts the processes).
func TestCheckStopsAtABrokenStdioServer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, script, want string
	}{
		{"crashes at start", `echo 'fatal: cannot open refunds.db: permission denied' >&2; exit 3`, "ended before it answered initialize: exited (exit status 3)"},
		{"prints garbage", `echo 'refunds server v1 listening on stdio'; echo 'fatal: the banner above broke the protocol' >&2; sleep 300`, `not a JSON-RPC message: "refunds server v1 listening on stdio"`},
		{"hangs", `echo 'fatal: waiting for a license server' >&2; sleep 300 & sleep 300`, "did not answer initialize within 1s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			marker := fmt.Sprintf("idemproof-test-%d", time.Now().UnixNano())
			dir := t.TempDir()
			prof := filepath.Join(dir, "p.yaml")
			require.NoError(t, os.WriteFile(prof, []byte(fmt.Sprintf(`name: broken
transport: mcp-stdio
key_field: params._meta.idempotency_key
mcp:
  command: [sh, -c, %q]
  env: {IDEMPROOF_TEST_MARKER: %s}
  start_timeout: 1s
operation: {tool: refund, body: '{"order_id": "{{.Entity}}", "amount": 4900}'}
side_effects: {tool: list_refunds, arguments: '{"order_id": "{{.Entity}}"}', count: result.structuredContent.count}
outcomes:
  in_flight: {json: {path: error.code, equals: -32010}}
  mismatch: {json: {path: error.code, equals: -32011}}
expect: {missing_key: optional}
`, tc.script, marker)), 0o644))
			_, stderr, code := runCLI(t, "check", "--profile", prof)
			require.Equal(t, 2, code, stderr)
			require.Contains(t, stderr, "mcp.command")
			require.Contains(t, stderr, tc.want)
			require.Contains(t, stderr, "fatal: ", "the server's stderr is shown")
			require.Empty(t, proctest.LiveWithEnv(t, "IDEMPROOF_TEST_MARKER="+marker), "no process of the server is left")
		})
	}
}

// The shim fronts a stdio server in its stead: what its rules say happens on the pipes,
// the rest passes, and the journal outlives it.
func TestProxyStdioShim(t *testing.T) {
	t.Parallel()
	bin := checkBinary(t)
	dir := t.TempDir()
	rules := filepath.Join(dir, "rules.yaml")
	require.NoError(t, os.WriteFile(rules, []byte("- name: lose-first\n  match: {key: \"*\", attempts: {from: 1, to: 1}}\n  fault: {type: after-drop}\n"), 0o644))
	journal := filepath.Join(dir, "journal.jsonl")
	cmd := exec.Command(bin, "proxy", "--stdio", "--rules", rules, "--key-field", "params._meta.idempotency_key", "--journal", journal, "--", bin, "serve", "--mcp", "--stdio")
	call := func(id int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"refund","arguments":{"order_id":"o1","amount":5},"_meta":{"idempotency_key":"k1"}}}`, id)
	}
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	send := func(line string) {
		_, err := io.WriteString(stdin, line+"\n")
		require.NoError(t, err)
	}
	r := bufio.NewReader(out)
	answer := func() (id, line string) {
		line, err := r.ReadString('\n')
		require.NoError(t, err)
		var m struct{ ID json.RawMessage }
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		return string(m.ID), line
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	id, _ := answer()
	require.Equal(t, "1", id)
	send(call(2))
	// The first call's answer is dropped; its refund shows in the ledger, then the retry
	// goes, as an agent's would after its timeout.
	for n := 100; ; n++ {
		require.Less(t, n, 1100, "the first call's refund never showed in the ledger")
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"list_refunds","arguments":{"order_id":"o1"}}}`, n))
		id, line := answer()
		require.Equal(t, strconv.Itoa(n), id, "only the ledger's answers come: the first call's was dropped")
		if strings.Contains(line, `\"count\":1`) || strings.Contains(line, `"count":1`) {
			break
		}
	}
	send(call(3))
	id, line := answer()
	require.Equal(t, "3", id, line)
	require.Contains(t, line, `"result"`, "the retry replays the committed refund")
	require.NoError(t, stdin.Close(), "the host stops its server")
	require.NoError(t, cmd.Wait(), stderr.String())
	require.Contains(t, stderr.String(), "behind the fault layer, admin http://127.0.0.1:")
	b, err := os.ReadFile(journal)
	require.NoError(t, err)
	require.Contains(t, string(b), `"rule":"lose-first","fault":"after-drop"`)
	require.Contains(t, string(b), `"client_result":"dropped"`)
}

// The MCP fixture over stdio reads its test hooks in _meta, which its built-in profile
// declares in the field form: with --test-hooks the hold and the failure act, the hook
// proof says so, and the hold scenarios PASS over stdio. A fixture without --test-hooks
// ignores the fields: the proof says slow_operation did not act and stops the run, or
// with --unproven-hooks na leaves the hold scenarios N/A — never a PASS leaning on a
// hold that did not happen.
func TestCheckStdioFieldHooksOnTheFixture(t *testing.T) {
	t.Parallel()
	bin := checkBinary(t)
	profileFor := func(serve ...string) string {
		command, err := json.Marshal(append([]string{bin, "serve", "--mcp", "--stdio", "--retention", "10s"}, serve...))
		require.NoError(t, err)
		path := filepath.Join(t.TempDir(), "p.yaml")
		require.NoError(t, os.WriteFile(path, []byte("extends: mcp-refunds-stdio\nmcp:\n  command: "+string(command)+"\n"), 0o644))
		return path
	}
	only := "race/in-flight-409,race/in-flight-original-fails,replay/sequential"

	out, stderr, code := runCLI(t, "check", "--profile", profileFor("--test-hooks"), "--only", only)
	require.Equal(t, 0, code, "%s\n%s", out, stderr)
	require.Regexp(t, `PASS\s+race/in-flight-409\s`, out)
	require.Regexp(t, `PASS\s+race/in-flight-original-fails\s`, out)
	require.Regexp(t, `PASS\s+replay/sequential\s`, out)

	out, stderr, code = runCLI(t, "check", "--profile", profileFor(), "--only", only)
	require.Equal(t, 2, code, "%s\n%s", out, stderr)
	require.Contains(t, stderr, "slow_operation did not act")
	require.NotRegexp(t, `PASS\s+race/`, out)

	out, stderr, code = runCLI(t, "check", "--profile", profileFor(), "--only", only, "--unproven-hooks", "na")
	require.Equal(t, 0, code, "%s\n%s", out, stderr)
	require.Regexp(t, `N/A\s+race/in-flight-409\s.*needs slow_operation to act, and it did not in the preflight`, out)
	require.Regexp(t, `N/A\s+race/in-flight-original-fails\s`, out)
	require.Regexp(t, `PASS\s+replay/sequential\s`, out, "the rest runs")
}

package main_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/examples/mcp-toolbox/toolbox"
	"github.com/idemproof/idemproof/examples/openapi-refunds/notes"
	"github.com/idemproof/idemproof/internal/proctest"
	"github.com/idemproof/idemproof/profile"
)

func startToolbox(t *testing.T) (*toolbox.Server, string) {
	t.Helper()
	box := toolbox.New(0)
	srv := httptest.NewServer(box.Handler())
	t.Cleanup(srv.Close)
	return box, srv.URL + "/mcp"
}

// TestScanPlanSendsNothing: --plan lists every tool and the calls the scan would make,
// and the server sees no tools/call.
func TestScanPlanSendsNothing(t *testing.T) {
	t.Parallel()
	box, endpoint := startToolbox(t)
	stdout, errOut, code := runCLI(t, "scan", "--mcp", endpoint, "--plan", "--args", "../../examples/mcp-toolbox/args.yaml")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, stdout, "(mcp-toolbox 1.0.0): 7 tools; tools.idempotency (SEP-3182) not advertised")
	require.Contains(t, stdout, "will probe 5 of 7:")
	require.Contains(t, stdout, "      ledger     list_refunds → result.structuredContent.count")
	require.Contains(t, stdout, "why        destructive (destructiveHint: true): probed with --allow-destructive, or --include delete_account")
	require.Contains(t, stdout, "--plan: nothing was called")
	require.Zero(t, box.Calls(), "the server saw no tools/call")
}

// TestScanAsksFirst: without --yes the scan prints the plan and asks; no answer, nothing
// is called (exit 2); "y" goes on.
func TestScanAsksFirst(t *testing.T) {
	t.Parallel()
	box, endpoint := startToolbox(t)
	stdout, errOut, code := runCLI(t, "scan", "--mcp", endpoint, "--only", "refund")
	require.Equal(t, 2, code)
	require.Contains(t, stdout, "will probe 1 of 7:")
	require.Contains(t, errOut, "Send these calls to 1 operation(s) of "+endpoint+"?")
	require.Contains(t, errOut, "not confirmed: nothing was called (answer y at the prompt, or pass --yes)")
	require.Zero(t, box.Calls())

	stdout, errOut, code = runCLIInput(t, "y\n", "scan", "--mcp", endpoint, "--only", "refund")
	require.Equal(t, 0, code, "%s\n%s", stdout, errOut)
	require.Positive(t, box.Executions("refund"))
}

// TestScanExitCodes: check's exit codes over the matrix: 0 judged without a FAIL, 1 a
// FAIL, 3 UNKNOWN cells beyond --allow-unknown, 2 nothing to scan.
func TestScanExitCodes(t *testing.T) {
	t.Parallel()
	_, endpoint := startToolbox(t)
	dir := filepath.Join(t.TempDir(), "reports")
	stdout, errOut, code := runCLI(t, "scan", "--mcp", endpoint, "--yes", "--only", "refund", "--seed", "4", "--report-dir", dir)
	require.Equal(t, 0, code, "%s\n%s", stdout, errOut)
	require.Contains(t, stdout, "repeat with: --seed 4")
	require.Contains(t, stdout, "1 of 6 write tools are safe to retry (refund); 6 not probed")
	var rep struct {
		Kind string `json:"kind"`
		Rows []struct {
			Cells []struct{ Check, Verdict string }
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "report.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &rep))
	require.Equal(t, "scan", rep.Kind)
	require.Len(t, rep.Rows, 7)
	for _, f := range []string{"report.md", "report.html"} {
		_, err := os.Stat(filepath.Join(dir, f))
		require.NoError(t, err)
	}

	_, _, code = runCLI(t, "scan", "--mcp", endpoint, "--yes", "--only", "send_email")
	require.Equal(t, 1, code, "a second email")
	stdout, _, code = runCLI(t, "scan", "--mcp", endpoint, "--yes", "--only", "set_status")
	require.Equal(t, 3, code, "no per-execution value: UNKNOWN")
	require.Contains(t, stdout, "incomplete: 2 UNKNOWN cell(s), --allow-unknown 0 (exit 3)")
	_, _, code = runCLI(t, "scan", "--mcp", endpoint, "--yes", "--only", "set_status", "--allow-unknown", "2")
	require.Equal(t, 0, code)

	_, errOut, code = runCLI(t, "scan", "--mcp", endpoint, "--yes", "--only", "list_refunds")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "nothing to probe: 7 operation(s) listed, none of them probed")
}

func TestScanUsageErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"scan"}, "nothing to scan: give --mcp URL"},
		{[]string{"scan", "--mcp-command"}, "--mcp-command needs the server's command after --"},
		{[]string{"scan", "--mcp", "http://127.0.0.1:1/mcp", "--mcp-command", "--", "srv"}, "give one of --mcp, --mcp-command and --openapi"},
		{[]string{"scan", "--header", "Authorization: Bearer x", "--mcp-command", "--", "srv"}, "--header goes with --mcp and --openapi"},
		{[]string{"scan", "--mcp", "http://127.0.0.1:1/mcp", "srv"}, `unexpected argument "srv"`},
		{[]string{"scan", "--openapi", "x.yaml"}, "--openapi needs --base-url"},
		{[]string{"scan", "--mcp", "http://127.0.0.1:1/mcp", "--header", "Bearer x"}, `--header "Bearer x": want 'Name: value'`},
		{[]string{"scan", "--mcp", "http://127.0.0.1:1/mcp"}, "cannot scan http://127.0.0.1:1/mcp: initialize"},
		{[]string{"scan", "--mcp", "http://127.0.0.1:1/mcp", "--args", "missing.yaml"}, "--args: stat missing.yaml"},
		{[]string{"scan", "--mcp", "http://127.0.0.1:1/mcp", "--args", `refund={"order_id":"o-1"}`}, "--args takes a YAML file, not the arguments themselves"},
	} {
		_, errOut, code := runCLI(t, c.args...)
		require.Equal(t, 2, code, c.args)
		require.Contains(t, errOut, c.want)
	}
}

// TestScanWriteProfiles: a starter profile per probed operation, each one loads; an MCP
// tool's says what the scan saw.
func TestScanWriteProfiles(t *testing.T) {
	t.Parallel()
	_, endpoint := startToolbox(t)
	dir := t.TempDir()
	_, errOut, code := runCLI(t, "scan", "--mcp", endpoint, "--yes", "--only", "refund,create_invoice", "--write-profiles", dir)
	require.Equal(t, 1, code, errOut)
	p, err := profile.Load(filepath.Join(dir, "refund.yaml"))
	require.NoError(t, err)
	require.True(t, p.IsMCP())
	require.Equal(t, "refund", p.Operation.Tool)
	require.Equal(t, "params._meta.idempotency_key", p.KeyField)
	require.Equal(t, "result.structuredContent.refund_id", p.Expect.UniqueField)
	require.Equal(t, `{"amount":4900,"order_id":"{{.Entity}}"}`, p.Operation.Body)
	require.Equal(t, "list_refunds", p.SideEffects.Tool, "the read-only tool named like it")
	text, err := os.ReadFile(filepath.Join(dir, "refund.yaml"))
	require.NoError(t, err)
	require.Contains(t, string(text), "mismatch: {json: {path: error.code, equals: -32011}}   # seen:")
	p, err = profile.Load(filepath.Join(dir, "create_invoice.yaml"))
	require.NoError(t, err)
	require.Equal(t, "params.arguments.idempotency_key", p.KeyField)

	_, errOut, _ = runCLI(t, "scan", "--mcp", endpoint, "--yes", "--only", "refund", "--write-profiles", dir)
	require.Contains(t, errOut, "refund.yaml exists (it may hold your edits)")
}

// TestScanOpenAPIWriteProfiles: from the OpenAPI example, init's profile with the base
// URL the scan used and the per-execution value it found.
func TestScanOpenAPIWriteProfiles(t *testing.T) {
	t.Parallel()
	s, err := notes.New()
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	stdout, errOut, code := runCLI(t, "scan", "--openapi", "../../examples/openapi-refunds/openapi.yaml", "--base-url", srv.URL, "--yes", "--only", "createRefund", "--write-profiles", dir)
	require.Equal(t, 0, code, "%s\n%s", stdout, errOut)
	p, err := profile.Load(filepath.Join(dir, "createRefund.yaml"))
	require.NoError(t, err)
	require.Equal(t, srv.URL, p.BaseURL)
	require.Equal(t, "id", p.Expect.UniqueField)
	require.Equal(t, "/v1/refunds", p.Operation.Path)
}

// TestScanStdioServer: --mcp-command starts the MCP fixture keyed as SEP-3182 and scans
// it over its pipes: the key found at params.idempotencyKey from the capability, the
// refund proven safe to retry, and a starter profile of transport mcp-stdio that starts
// the same server and passes the catalogue's replays.
func TestScanStdioServer(t *testing.T) {
	t.Parallel()
	bin := checkBinary(t)
	dir := t.TempDir()
	args := filepath.Join(dir, "args.yaml")
	require.NoError(t, os.WriteFile(args, []byte(`operations:
  refund:
    arguments: {order_id: "{{.Entity}}", amount: 4900}
    change: {amount: 5000}
    ledger: {tool: list_refunds, arguments: {order_id: "{{.Entity}}"}, count: result.structuredContent.count}
`), 0o644))
	profiles := filepath.Join(dir, "profiles")
	server := []string{bin, "serve", "--mcp", "--stdio", "--key-in", "params"}
	stdout, errOut, code := runCLI(t, append([]string{"scan", "--args", args, "--yes", "--only", "refund", "--write-profiles", profiles, "--start-timeout", "40s", "--mcp-command", "--"}, server...)...)
	require.Equal(t, 0, code, "%s\n%s", stdout, errOut)
	require.Contains(t, stdout, "idemproof scan: mcp stdio server "+strings.Join(server, " ")+" (idemproof-refunds 1): 2 tools; the server advertises tools.idempotency (SEP-3182)")
	require.Regexp(t, `(?m)^\s+takes a key\s+PASS\s+params\.idempotencyKey \(the server advertises tools\.idempotency`, stdout)
	require.Regexp(t, `(?m)^\s+replays after a lost answer\s+PASS\s+one execution: the ledger \(list_refunds → result\.structuredContent\.count\) counted 1`, stdout)
	require.Contains(t, stdout, "1 of 1 write tools are safe to retry (refund); 1 not probed")

	path := filepath.Join(profiles, "refund.yaml")
	p, err := profile.Load(path)
	require.NoError(t, err)
	require.True(t, p.IsStdio())
	require.Equal(t, server, p.MCP.Command)
	require.Equal(t, 40*time.Second, p.StartTimeout(), "the scan's --start-timeout, declared")
	require.Equal(t, "params.idempotencyKey", p.KeyField)
	out, errOut, code := runCLI(t, "check", "--profile", path, "--only", "replay/sequential,replay/after-reset")
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	require.Regexp(t, `(?m)^PASS\s+replay/after-reset\s`, out)
	require.Regexp(t, `(?m)^PASS\s+replay/sequential\s`, out)
}

// A stdio server that cannot be started, ends at its start or writes something that is
// not JSON-RPC to its stdout stops the scan before anything is called: exit 2, the
// server's stderr in the message, and no process of it left.
func TestScanStopsAtABrokenStdioServer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		command []string
		want    []string
	}{
		{"not found", []string{"./idemproof-no-such-server"}, []string{`"./idemproof-no-such-server" was not found (check the command after --mcp-command -- and the PATH)`}},
		{"crashes at start", []string{"sh", "-c", `echo 'fatal: cannot open refunds.db: permission denied' >&2; exit 3`},
			[]string{"ended before it answered initialize: exited (exit status 3)", "fatal: cannot open refunds.db"}},
		{"prints garbage", []string{"sh", "-c", `echo 'refunds server v1 listening on stdio'; echo 'fatal: the banner above broke the protocol' >&2; sleep 300`},
			[]string{`not a JSON-RPC message: "refunds server v1 listening on stdio"`, "fatal: the banner above"}},
		{"slower than --start-timeout", []string{"--start-timeout", "1s", "--", "sh", "-c", `echo 'downloading the package…' >&2; sleep 300`},
			[]string{"did not answer initialize within 1s", "downloading the package"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			marker := fmt.Sprintf("IDEMPROOF_TEST_MARKER=scan-%d", time.Now().UnixNano())
			command, flags := tc.command, []string(nil)
			if i := slices.Index(command, "--"); i >= 0 {
				flags, command = command[:i], command[i+1:]
			}
			if command[0] == "sh" {
				command = append([]string{"env", marker}, command...)
			}
			stdout, errOut, code := runCLI(t, append(append(append([]string{"scan", "--yes"}, flags...), "--mcp-command", "--"), command...)...)
			require.Equal(t, 2, code, "%s\n%s", stdout, errOut)
			require.Contains(t, errOut, "idemproof scan: cannot scan: start the stdio server "+command[0])
			for _, want := range tc.want {
				require.Contains(t, errOut, want)
			}
			require.NotContains(t, stdout, "probing", "nothing was called")
			require.Empty(t, proctest.LiveWithEnv(t, marker), "no process of the server is left")
		})
	}
}

// A server that re-renders its replays (a fresh id each time) executes once — the ledger
// says so — yet an agent's retry is told another result than the one that committed:
// the scan FAILs it for that, naming both ids.
func TestScanCatchesAReplayThatIsNotTheResult(t *testing.T) {
	t.Parallel()
	bin := checkBinary(t)
	args := filepath.Join(t.TempDir(), "args.yaml")
	require.NoError(t, os.WriteFile(args, []byte(`operations:
  refund:
    arguments: {order_id: "{{.Entity}}", amount: 4900}
    ledger: {tool: list_refunds, arguments: {order_id: "{{.Entity}}"}, count: result.structuredContent.count}
`), 0o644))
	stdout, errOut, code := runCLI(t, "scan", "--args", args, "--yes", "--only", "refund", "--mcp-command", "--", bin, "serve", "--mcp", "--stdio", "--flaw", "replay-regenerates")
	require.Equal(t, 1, code, "%s\n%s", stdout, errOut)
	require.Regexp(t, `(?m)^\s+replays after a lost answer\s+FAIL\s+one execution \(the ledger, list_refunds → result\.structuredContent\.count, counted 1\), but the repeat with the same key was not answered with its result: the lost answer had result\.structuredContent\.id "re_\w+", the repeat with the same key "re_\w+"`, stdout)
	require.Regexp(t, `(?m)^\s+annotation honest\s+PASS\s+declares idempotentHint: true, and one execution`, stdout)
}

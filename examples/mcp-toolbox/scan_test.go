package main_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/examples/mcp-toolbox/toolbox"
	"github.com/idemproof/idemproof/internal/proctest"
	"github.com/idemproof/idemproof/scan"
	"github.com/idemproof/idemproof/verdict"
)

const (
	pass    = verdict.Pass
	fail    = verdict.Fail
	unknown = verdict.Unknown
	na      = verdict.NA
)

// want is the scan matrix of the toolbox, each cell explained by the tool's source
// (toolbox/toolbox.go). Columns: takes a key, replays after a lost answer, refuses a
// changed request, one of two concurrent copies, annotation honest.
var want = map[string][5]verdict.Verdict{
	// _meta.idempotency_key, named by its description; the key is recorded with a
	// fingerprint before the work: the repeat replays refund_id, other arguments are
	// refused (-32011), the second copy is refused in flight (-32010) and its retry
	// replays. It declares no idempotentHint.
	"refund": {pass, pass, pass, pass, na},
	// Its idempotency_key argument; no fingerprint: the repeat replays, but so does the
	// key with another amount — the original's invoice_id for other arguments.
	"create_invoice": {pass, pass, fail, pass, na},
	// No key: the repeat after a lost answer sends a second email (another message_id).
	"send_email": {fail, fail, na, na, na},
	// No key, idempotentHint: true, and every call adds a note (another note_id): the
	// annotation lies.
	"add_note": {fail, fail, na, na, fail},
	// No key, idempotentHint: true, idempotent indeed — but its answer carries nothing
	// minted per call, so a replay and a second execution look alike: UNKNOWN, not a guess.
	"set_status": {na, unknown, na, na, unknown},
	// readOnlyHint: listed, not probed without --include-readonly.
	"list_refunds": {na, na, na, na, na},
	// destructiveHint: not probed without --allow-destructive.
	"delete_account": {na, na, na, na, na},
}

// toolboxBinary builds this example's command once per test binary, for the scan to start
// as a stdio server.
var toolboxBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "mcp-toolbox-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "mcp-toolbox")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

func TestMain(m *testing.M) {
	code := m.Run()
	if bin, err := toolboxBinary(); err == nil {
		os.RemoveAll(filepath.Dir(bin))
	}
	os.Exit(code)
}

func scanToolbox(t *testing.T, args *scan.Args) (*scan.Report, *toolbox.Server) {
	t.Helper()
	box := toolbox.New(20 * time.Millisecond)
	srv := httptest.NewServer(box.Handler())
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	cfg := &scan.Config{MCP: srv.URL + "/mcp", Args: args, Seed: 7}
	target, err := scan.Enumerate(ctx, cfg)
	require.NoError(t, err)
	rep, err := scan.Run(ctx, cfg, target)
	require.NoError(t, err)
	return rep, box
}

func requireMatrix(t *testing.T, rep *scan.Report) {
	t.Helper()
	got := map[string][5]verdict.Verdict{}
	for _, row := range rep.Rows {
		var v [5]verdict.Verdict
		for i, c := range row.Cells {
			v[i] = c.Verdict
			require.NotEmpty(t, c.Evidence, "%s %s: every cell explains itself", row.Operation.Name, scan.Checks[i])
		}
		got[row.Operation.Name] = v
	}
	for _, row := range rep.Rows {
		for i, c := range row.Cells {
			t.Logf("%-15s %-28s %-8s %s", row.Operation.Name, scan.Checks[i], c.Verdict, c.Evidence)
		}
	}
	require.Equal(t, want, got)
}

// TestScanMatrix pins what idemproof scan reports for the toolbox with its args.yaml:
// refund judged by its ledger, the others by the per-execution values the scan detects.
func TestScanMatrix(t *testing.T) {
	t.Parallel()
	args, err := scan.LoadArgs("args.yaml")
	require.NoError(t, err)
	rep, box := scanToolbox(t, args)
	requireMatrix(t, rep)
	require.Equal(t, "1 of 6 write tools are safe to retry (refund); 1 declares idempotentHint and executed twice: add_note; 2 not probed", rep.Headline.Text)
	require.Zero(t, box.Executions("delete_account"), "a destructive tool is never called")
	require.Zero(t, box.Executions("list_refunds")-0, "list_refunds is read through the ledger only")
	for _, row := range rep.Rows {
		if row.Operation.Name == "refund" {
			require.Contains(t, row.Cell(scan.CheckReplay).Evidence, "ledger (list_refunds → result.structuredContent.count) counted 1")
		}
	}
}

// TestScanMatrixWithoutArgs: the same matrix from the schema's examples alone, refund
// judged by the refund_id it mints per execution.
func TestScanMatrixWithoutArgs(t *testing.T) {
	t.Parallel()
	rep, _ := scanToolbox(t, nil)
	requireMatrix(t, rep)
	for _, row := range rep.Rows {
		if row.Operation.Name == "refund" {
			require.Equal(t, "result.structuredContent.refund_id", row.PerExecution)
		}
	}
}

// TestScanMatrixOverStdio: the same toolbox started as a stdio server (-stdio), scanned
// with --mcp-command's form: the same matrix, its lost answers lost on the pipe, and no
// process of it left once the scan is done.
func TestScanMatrixOverStdio(t *testing.T) {
	t.Parallel()
	bin, err := toolboxBinary()
	require.NoError(t, err)
	args, err := scan.LoadArgs("args.yaml")
	require.NoError(t, err)
	marker := fmt.Sprintf("IDEMPROOF_TEST_MARKER=toolbox-%d", time.Now().UnixNano())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := &scan.Config{MCPCommand: []string{"env", marker, bin, "-stdio", "-work", "20ms"}, Args: args, Seed: 7}
	target, err := scan.Enumerate(ctx, cfg)
	require.NoError(t, err)
	require.Equal(t, scan.KindMCP, target.Kind)
	require.Equal(t, cfg.MCPCommand, target.Command)
	require.Equal(t, "mcp-toolbox 1.0.0", target.Server)
	require.Len(t, target.Operations, 7)
	require.Empty(t, proctest.LiveWithEnv(t, marker), "the listing's server is stopped")
	rep, err := scan.Run(ctx, cfg, target)
	require.NoError(t, err)
	requireMatrix(t, rep)
	require.Equal(t, "1 of 6 write tools are safe to retry (refund); 1 declares idempotentHint and executed twice: add_note; 2 not probed", rep.Headline.Text)
	for _, row := range rep.Rows {
		if row.Operation.Name == "refund" {
			require.Contains(t, row.Cell(scan.CheckReplay).Evidence, "ledger (list_refunds → result.structuredContent.count) counted 1")
		}
	}
	require.Empty(t, proctest.LiveWithEnv(t, marker), "no process of the server is left")
}

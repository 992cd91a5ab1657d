package scenarios

import (
	"context"
	"errors"
	"strings"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/transport/mcpstdio"
)

// A stdio server's preflight starts it first, alone: a command that is not found, a
// server that exits at start, writes anything but JSON-RPC to its stdout or does not
// answer initialize within mcp.start_timeout stops the run here, with the server's
// stderr, and the process is reaped before the error returns (package mcpstdio). The rest
// is the preflight every target gets, over the same session; the server is stopped at
// its end.

// stdioSession starts the profile's server for the preflight; nil for a target of
// another transport.
func (pf *preflight) stdioSession(ctx context.Context) error {
	tr, ok := pf.t.tr.(*mcpstdio.Transport)
	if !ok {
		return nil
	}
	if _, err := tr.Session(ctx); err != nil {
		var se *mcpstdio.StartError
		if errors.As(err, &se) {
			return pf.fail("mcp.command", "%v\n  (the server is the profile's mcp.command, run with mcp.env in mcp.dir)", err)
		}
		return pf.fail("mcp.command", "start the stdio server %s: %v", tr.Command, err)
	}
	return nil
}

// closeStdio stops the preflight's server, if it started one.
func (pf *preflight) closeStdio() {
	if tr, ok := pf.t.tr.(*mcpstdio.Transport); ok {
		tr.Close()
	}
}

// stdioLedgerFailure names what to fix when a stdio server's ledger tool could not be
// read: the server is running (its session started), so the tool, its arguments or the
// count path are wrong, or the server died meanwhile.
func (pf *preflight) stdioLedgerFailure(field string, pr profile.Probe, err error, note string) error {
	why := strings.TrimPrefix(err.Error(), "read ledger: ")
	if errors.Is(err, mcpstdio.ErrServerExited) {
		return pf.fail("mcp.command", "the server exited while the ledger tool %s was read: %s", pr.Tool, why)
	}
	var rpc *mcpstdio.RPCError
	if errors.As(err, &rpc) {
		return pf.fail(field+".tool", "the ledger tool %s was refused (%s): fix %s.tool or %s.arguments%s", pr.Tool, why, field, field, note)
	}
	return pf.fail(field+".count", "the ledger tool %s does not resolve to a number (%s): fix %s.count (a JSON path into the JSON-RPC response, such as result.structuredContent.count) or %s.tool%s", pr.Tool, why, field, field, note)
}

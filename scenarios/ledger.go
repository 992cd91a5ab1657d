package scenarios

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/idemproof/idemproof/transport"
)

// readLedger counts the side effects for entity with the probe, through the target's
// transport: an HTTP GET, or over MCP a call of the ledger tool.
func (t *target) readLedger(ctx context.Context, pr Probe, entity string) (int, error) {
	path, err := render(pr.Path, entity)
	if err != nil {
		return 0, fmt.Errorf("render ledger path: %w", err)
	}
	args, err := render(pr.Arguments, entity)
	if err != nil {
		return 0, fmt.Errorf("render ledger arguments: %w", err)
	}
	h := http.Header{}
	for k, v := range t.p.Operation.Headers {
		h.Set(k, v)
	}
	if len(t.p.Principals) > 0 {
		for k, v := range t.p.Principals[0] {
			h.Set(k, v)
		}
	}
	for k, v := range pr.Headers {
		h.Set(k, v)
	}
	l := transport.Ledger{Method: pr.Method, URL: strings.TrimSuffix(t.ledgerBase(), "/") + path, Header: h, Tool: pr.Tool, Count: pr.Count}
	if args != "" {
		l.Arguments = []byte(args)
	}
	return t.tr.Count(ctx, l)
}

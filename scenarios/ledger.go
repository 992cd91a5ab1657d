package scenarios

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/idemproof/idemproof/transport"
	"github.com/idemproof/idemproof/verdict"
)

// readOperationLedger counts the operation's side effects of a scenario run: its
// entity's, plus its side entities' (Record.SideEntities).
func (t *target) readOperationLedger(ctx context.Context, rec *verdict.Record) (int, error) {
	total := 0
	for _, entity := range append([]string{rec.Entity}, rec.SideEntities...) {
		n, err := t.readLedger(ctx, t.p.SideEffects, entity)
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// readLedger counts the side effects for entity with the probe, through the target's
// transport: an HTTP GET, or over MCP a call of the ledger tool.
func (t *target) readLedger(ctx context.Context, pr Probe, entity string) (int, error) {
	return countLedger(ctx, t.p, t.tr, t.ledgerBase(), pr, entity)
}

// LedgerReader reads a profile's ledger (side_effects) as check does, for client-check,
// which counts the same effects: the probe rendered for the entity, with its method,
// headers and body, and reads a rate limit refused waited out.
type LedgerReader struct {
	p  *Profile
	tr transport.Transport
}

// NewLedgerReader reads p's ledger at p.BaseURL with probe (the client of ledger reads)
// and the profile's outcome rules (a throttled: rule names a rate limit's answer).
func (p *Profile) NewLedgerReader(probe *http.Client) *LedgerReader {
	return &LedgerReader{p: p, tr: p.newTransport(p.Classifier(), probe, nil)}
}

// Count counts entity's side effects.
func (r *LedgerReader) Count(ctx context.Context, entity string) (int, error) {
	return countLedger(ctx, r.p, r.tr, r.p.BaseURL, r.p.SideEffects, entity)
}

// countLedger counts entity's side effects with probe pr of profile p over tr, the
// ledger at base.
func countLedger(ctx context.Context, p *Profile, tr transport.Transport, base string, pr Probe, entity string) (int, error) {
	path, err := render(pr.Path, entity)
	if err != nil {
		return 0, fmt.Errorf("render ledger path: %w", err)
	}
	args, err := render(pr.Arguments, entity)
	if err != nil {
		return 0, fmt.Errorf("render ledger arguments: %w", err)
	}
	body, err := render(pr.Body, entity)
	if err != nil {
		return 0, fmt.Errorf("render ledger body: %w", err)
	}
	h, err := p.requestHeaders(p.Operation.Headers, 0, entity)
	if err != nil {
		return 0, err
	}
	for k, v := range pr.Headers {
		h.Set(k, v)
	}
	l := transport.Ledger{Method: pr.Method, URL: strings.TrimSuffix(base, "/") + path, Header: h, Tool: pr.Tool, Count: pr.Count}
	if args != "" {
		l.Arguments = []byte(args)
	}
	if body != "" {
		l.Body = []byte(body)
	}
	deadline := time.Now().Add(transport.ThrottleBudget)
	for {
		n, err := tr.Count(ctx, l)
		var throttled transport.ThrottledRead
		if err == nil || !errors.As(err, &throttled) || !throttled.Throttled() {
			return n, err
		}
		// A GET is safe to repeat, and without the count the scenario is only UNKNOWN.
		wait := transport.ThrottleWait(throttled.Wait())
		if time.Now().Add(wait).After(deadline) {
			return 0, transport.StillThrottled(err)
		}
		if !transport.Sleep(ctx, wait) {
			return 0, err
		}
	}
}

package profile

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/idemproof/idemproof/transport"
)

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
	return &LedgerReader{p: p, tr: p.NewTransport(p.Classifier(), probe, nil)}
}

// LedgerReaderOver reads p's ledger over tr (a stdio server's: through the connection
// the caller dialled).
func (p *Profile) LedgerReaderOver(tr transport.Transport) *LedgerReader {
	return &LedgerReader{p: p, tr: tr}
}

// Count counts entity's side effects.
func (r *LedgerReader) Count(ctx context.Context, entity string) (int, error) {
	return CountLedger(ctx, r.p, r.tr, r.p.BaseURL, r.p.SideEffects, entity)
}

// CountLedger counts entity's side effects with probe pr of profile p over tr, the
// ledger at base.
func CountLedger(ctx context.Context, p *Profile, tr transport.Transport, base string, pr Probe, entity string) (int, error) {
	path, err := Render(pr.Path, entity)
	if err != nil {
		return 0, fmt.Errorf("render ledger path: %w", err)
	}
	args, err := Render(pr.Arguments, entity)
	if err != nil {
		return 0, fmt.Errorf("render ledger arguments: %w", err)
	}
	body, err := Render(pr.Body, entity)
	if err != nil {
		return 0, fmt.Errorf("render ledger body: %w", err)
	}
	h, err := p.RequestHeaders(p.Operation.Headers, 0, entity)
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

// Ledger scopes (side_effects.scope).
const (
	// ScopeEntity: the ledger path names {{.Entity}} and counts that entity's effects, so
	// scenarios running at once never see each other's.
	ScopeEntity = "entity"
	// ScopeGlobal: one count of every effect (a counter, a balance, a total). It is read
	// before and after each scenario and the difference is the scenario's count, so the
	// target's scenarios run one at a time.
	ScopeGlobal = "global"
)

func (pr Probe) Global() bool { return pr.Scope == ScopeGlobal }

// HasGlobalLedger reports whether any ledger of the profile counts every effect.
func (p *Profile) HasGlobalLedger() bool {
	return p.SideEffects.Global() || (p.Other != nil && p.Other.SideEffects.Global())
}

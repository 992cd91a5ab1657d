package faultproxy

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"
)

// Engine is the proxy without its HTTP side: rule selection, attempt numbering per key,
// the journal and the admin API, for a fault layer that carries attempts over another
// medium (faultproxy/stdio: JSON-RPC lines on a server process's pipes). The layer
// builds and applies faults of its own; the Engine decides which rule an attempt gets,
// from the same rules, the same one seeded source and the same attempt counters as the
// proxy, and keeps the same journal within the same byte bounds. It implements
// Controller, and AdminHandler serves it exactly as the proxy's admin API does.
//
//	layer ──Begin(attempt)──> Engine: ordinal of the key, the rule chosen (or none)
//	      ──Finish(ticket, record)──> journal
type Engine struct {
	cfg      EngineConfig
	rules    *ruleSet
	journal  *journal
	inFlight atomic.Int64
}

// EngineConfig configures an Engine. Zero values mean the proxy's defaults (Config).
type EngineConfig struct {
	// CheckFault says whether the layer can apply a fault: nil when it can, else why not
	// (a *FieldError naming the parameter, "fault.type", reads best). Required.
	CheckFault func(FaultSpec) error
	// Seed seeds the one random source behind rule probabilities.
	Seed int64
	// Rules are added in order; a bad one makes NewEngine fail with a *RuleError.
	Rules []Rule
	// JournalCapacity, JournalBytes and AttemptKeyBytes bound the journal and the attempt
	// counters as Config's fields of the same names do.
	JournalCapacity int
	JournalBytes    int64
	AttemptKeyBytes int64
	// AdminAddr and AdminAllowHosts are the Host values AdminHandler answers to besides
	// loopback names and IP literals, as Config's fields of the same names.
	AdminAddr       string
	AdminAllowHosts []string
}

var _ Controller = (*Engine)(nil)

// NewEngine checks cfg, applies defaults and adds cfg.Rules in order.
func NewEngine(cfg EngineConfig) (*Engine, error) {
	if cfg.CheckFault == nil {
		return nil, fmt.Errorf("new engine: no CheckFault: the layer must say which faults it applies")
	}
	c := Config{JournalCapacity: cfg.JournalCapacity, JournalBytes: cfg.JournalBytes, AttemptKeyBytes: cfg.AttemptKeyBytes}.withDefaults()
	if err := c.check(); err != nil {
		return nil, fmt.Errorf("new engine: %w", err)
	}
	cfg.JournalCapacity, cfg.JournalBytes, cfg.AttemptKeyBytes = c.JournalCapacity, c.JournalBytes, c.AttemptKeyBytes
	e := &Engine{cfg: cfg, rules: newRuleSet(cfg.Seed), journal: newJournal(c.JournalCapacity, c.JournalBytes, c.AttemptKeyBytes)}
	if len(cfg.Rules) > 0 {
		if err := e.AddRules(cfg.Rules...); err != nil {
			return nil, fmt.Errorf("new engine: %w", err)
		}
	}
	return e, nil
}

// Attempt is what a rule matches an attempt by (Match). A layer fills what its medium
// has: Method and Path may be any strings it documents (the stdio layer: no method, the
// JSON-RPC method as the path), Header any attributes its rules are to match.
type Attempt struct {
	Method, Path string
	Header       http.Header
	Key          string
	HasKey       bool
}

// Ticket is one attempt begun: its ordinal for its key (0 without a key) and the rule
// chosen for it (nil: none). Finish journals it.
type Ticket struct {
	Ordinal int
	Rule    *Rule
	epoch   *journalEpoch
}

// Begin numbers the attempt for its key and chooses its rule, exactly as the proxy does
// for a request: the first rule whose match holds, whose count is left and whose
// probability draw succeeds. Every Begin must be followed by one Finish.
func (e *Engine) Begin(a Attempt) Ticket {
	e.inFlight.Add(1)
	t := Ticket{epoch: e.journal.current()}
	if a.HasKey {
		t.Ordinal = e.journal.nextAttempt(t.epoch, a.Key)
	}
	if ar := e.rules.choose(&attemptInfo{method: a.Method, path: a.Path, header: a.Header, key: a.Key, hasKey: a.HasKey, attempt: t.Ordinal}); ar != nil {
		r := ar.rule
		t.Rule = &r
	}
	return t
}

// Finish journals the attempt's record: its Attempt, Rule and Fault from the ticket, its
// Outcome from ClientResult and ClientStatus when left empty, its size counted against
// the journal's bounds. The record must not be changed afterwards.
func (e *Engine) Finish(t Ticket, rec *Record) {
	defer e.inFlight.Add(-1)
	e.appendRecord(t.epoch, t.Ordinal, t.Rule, rec)
}

// Log journals the record of a message that began no attempt (one no rule is to match:
// a notification, a message from the server), as Finish does.
func (e *Engine) Log(rec *Record) { e.appendRecord(e.journal.current(), 0, nil, rec) }

// appendRecord appends rec to the epoch's journal with what the attempt's ticket knew.
func (e *Engine) appendRecord(epoch *journalEpoch, ordinal int, rule *Rule, rec *Record) {
	if rec.Time.IsZero() {
		rec.Time = time.Now()
	}
	if ordinal > 0 {
		rec.Attempt = ordinal
	}
	if rule != nil {
		rec.Rule, rec.Fault = rule.Name, rule.Fault.Type
	}
	if rec.Outcome == "" {
		rec.Outcome = outcomeOf(rec.ClientResult, rec.ClientStatus)
	}
	headerBytes := 0
	for k, v := range rec.Headers {
		headerBytes += len(k) + len(v) + headerEntryBytes
	}
	e.journal.append(epoch, rec, headerBytes)
}

// AddRule validates r and appends it (see Proxy.AddRule).
func (e *Engine) AddRule(_ context.Context, r Rule) error { return e.AddRules(r) }

// AddRules validates the rules, their faults with CheckFault, and appends them in
// order, all or none (see Proxy.AddRules).
func (e *Engine) AddRules(rules ...Rule) error {
	batch := make([]*activeRule, len(rules))
	for i, r := range rules {
		idx := i
		if len(rules) == 1 {
			idx = -1
		}
		ar, err := compileChecked(r, idx, e.cfg.CheckFault)
		if err != nil {
			return err
		}
		batch[i] = ar
	}
	return e.rules.add(batch...)
}

// DeleteRule removes the named rule; ErrRuleNotFound when there is none.
func (e *Engine) DeleteRule(_ context.Context, name string) error {
	if !e.rules.remove(name) {
		return fmt.Errorf("delete rule %q: %w", name, ErrRuleNotFound)
	}
	return nil
}

// Reset removes every rule, clears the journal and the attempt counters, and reseeds
// the random source.
func (e *Engine) Reset(context.Context) error {
	e.rules.reset()
	e.journal.reset()
	return nil
}

// Journal returns the records matching q, in sequence order.
func (e *Engine) Journal(_ context.Context, q JournalQuery) ([]Record, error) {
	recs, _ := e.journal.query(q)
	return recs, nil
}

func (e *Engine) journalPage(q JournalQuery) ([]Record, bool) { return e.journal.query(q) }

// Rules returns the rules in evaluation order with their firing counts.
func (e *Engine) Rules() []RuleStatus { return e.rules.snapshot() }

// JournalStats reports the journal's totals since the last Reset.
func (e *Engine) JournalStats() JournalStats { return e.journal.stats() }

// WaitIdle returns once every attempt begun has been finished, so the journal holds
// every attempt made so far. It polls; ctx bounds the wait.
func (e *Engine) WaitIdle(ctx context.Context) error {
	t := time.NewTicker(2 * time.Millisecond)
	defer t.Stop()
	for e.inFlight.Load() > 0 {
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait idle: %d attempts in flight: %w", e.inFlight.Load(), ctx.Err())
		case <-t.C:
		}
	}
	return nil
}

// AdminHandler serves the admin API (see Proxy.AdminHandler) for the engine.
func (e *Engine) AdminHandler(token string) http.Handler {
	return adminHandler(e, newHostSet(e.cfg.AdminAddr, e.cfg.AdminAllowHosts), token)
}

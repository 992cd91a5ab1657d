package faultproxy

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Version is the faultproxy version the admin API reports; set at link time.
var Version = "dev"

// Proxy is the fault-injecting reverse proxy: an http.Handler for client traffic and a
// Controller for rules and the journal. Create it with New; it is safe for concurrent use.
type Proxy struct {
	cfg       Config
	upstreams []*url.URL
	next      atomic.Uint64
	transport http.RoundTripper
	direct    *directClient // nil: every call goes through transport
	rules     *ruleSet
	journal   *journal
	bufs      sync.Pool
	inFlight  atomic.Int64
	redacted  map[string]bool
	keySegs   []string // Config.KeyField's member names
	fast      bool     // Start's connections may take the fast path (fast_exchange.go)
	// fastServed and handedOff count attempts the fast path forwarded and connections it
	// moved to net/http; tests read them to know which path served what.
	fastServed, handedOff atomic.Uint64
}

var _ Controller = (*Proxy)(nil)

// New checks cfg, applies defaults and adds cfg.Rules in order. A bad rule is a
// *RuleError naming its index and field.
func New(cfg Config) (*Proxy, error) {
	cfg = cfg.withDefaults()
	if err := cfg.check(); err != nil {
		return nil, fmt.Errorf("new proxy: %w", err)
	}
	ups, err := cfg.upstreamURLs()
	if err != nil {
		return nil, fmt.Errorf("new proxy: %w", err)
	}
	p := &Proxy{
		cfg:       cfg,
		upstreams: ups,
		transport: cfg.Transport,
		rules:     newRuleSet(cfg.Seed),
		journal:   newJournal(cfg.JournalCapacity, cfg.JournalBytes, cfg.AttemptKeyBytes),
		redacted:  redactionSet(cfg.Redact),
		keySegs:   SplitKeyField(cfg.KeyField),
	}
	if p.transport == nil {
		tr := NewTransport(cfg.InsecureSkipVerify)
		if cfg.TLSClientConfig != nil {
			tr.TLSClientConfig = cfg.TLSClientConfig.Clone()
			tr.TLSClientConfig.InsecureSkipVerify = tr.TLSClientConfig.InsecureSkipVerify || cfg.InsecureSkipVerify
		}
		tr.IdleConnTimeout = cfg.UpstreamIdleTimeout
		p.transport = tr
		p.direct = newDirectClient(ups, cfg.UpstreamIdleTimeout)
	}
	p.fast = p.fastEligible()
	p.bufs.New = func() any { b := make([]byte, 32<<10); return &b }
	if len(cfg.Rules) > 0 {
		if err := p.AddRules(cfg.Rules...); err != nil {
			return nil, fmt.Errorf("new proxy: %w", err)
		}
	}
	return p, nil
}

// Config returns the configuration in effect (defaults applied).
func (p *Proxy) Config() Config { return p.cfg }

// pick chooses the next upstream round-robin.
func (p *Proxy) pick() *url.URL {
	if len(p.upstreams) == 1 {
		return p.upstreams[0]
	}
	return p.upstreams[(p.next.Add(1)-1)%uint64(len(p.upstreams))]
}

// pickPair chooses two consecutive upstreams: different ones whenever there are several.
func (p *Proxy) pickPair() (*url.URL, *url.URL) {
	i := p.next.Add(2) - 2
	n := uint64(len(p.upstreams))
	return p.upstreams[i%n], p.upstreams[(i+1)%n]
}

// ServeHTTP proxies one attempt: key and attempt ordinal, rule choice, the fault or plain
// forwarding, then exactly one journal record.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// A request the fast path decided (a rule picked a fault) arrives counted in flight,
	// its attempt numbered and its rule fired: it is served with that decision.
	decided := p.takeHandoff(r)
	defer p.inFlight.Add(-1)
	ex := p.newExchange(w, r)
	epoch := p.journal.current()
	if decided != nil {
		epoch = decided.epoch
		ex.rec.Time = decided.record.Time
	}
	defer ex.finish(epoch)
	if !ex.body.complete && p.cfg.BodyTimeout > 0 {
		ex.body.limitTime(w, p.cfg.BodyTimeout)
	}

	if r.Method == http.MethodConnect {
		// A reverse proxy is no tunnel: forwarding CONNECT would turn the upstream
		// response into a raw byte stream that never ends.
		ex.Note("CONNECT is not proxied")
		ex.Respond(http.StatusMethodNotAllowed, http.Header{"Allow": {"GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS"}}, []byte("faultproxy: CONNECT is not supported\n"))
		return
	}
	if strings.Contains(r.RequestURI, "#") {
		// Go's server takes a raw '#' into the path, so rules would match a path the
		// upstream gets as %23; no HTTP client sends one (a fragment stays with it).
		ex.rec.Path, ex.rec.PathClipped = clipPath(r.RequestURI)
		ex.refuse("the request target holds a '#', which is no part of an HTTP request target (a URL's fragment stays with the client): send the path without it, or escape it as %23")
		return
	}
	var ar *activeRule
	if decided != nil {
		if p.cfg.KeyField != "" && ex.body.bufferAll(p.cfg.BufferLimit) {
			ex.jsonRPC() // journals the id and method, as key() does
		}
		d := decided.record
		ex.rec.Key, ex.rec.HasKey, ex.rec.Attempt = d.Key, d.HasKey, d.Attempt
		ar = decided.rule
	} else {
		key, hasKey, refusal := ex.key()
		if refusal != "" {
			ex.refuse(refusal)
			return
		}
		ex.rec.Key, ex.rec.HasKey = key, hasKey
		if hasKey {
			ex.rec.Attempt = p.journal.nextAttempt(epoch, key)
		}
		ar = p.rules.choose(&attemptInfo{
			method: r.Method, path: r.URL.Path, header: r.Header,
			key: key, hasKey: hasKey, attempt: ex.rec.Attempt,
		})
	}
	if ar == nil {
		ex.Forward()
		return
	}
	ex.rec.Rule, ex.rec.Fault = ar.rule.Name, ar.rule.Fault.Type
	ar.fault.Apply(ex)
	if !ex.answered {
		ex.Note("fault returned without answering the client")
		ex.Respond(http.StatusInternalServerError, nil, []byte("faultproxy: fault "+ar.rule.Fault.Type+" did not answer\n"))
	}
}

// key finds the attempt's idempotency key in the body field or the header. refusal,
// when set, is why the request is refused instead (a body field that cannot be read
// unambiguously).
func (ex *Exchange) key() (key string, ok bool, refusal string) {
	if f := ex.p.cfg.KeyField; f != "" {
		if !ex.body.bufferAll(ex.p.cfg.BufferLimit) {
			if ex.body.failure() == nil {
				ex.Note(fmt.Sprintf("request body over buffer limit (%d bytes): key field not read", ex.p.cfg.BufferLimit))
			}
			return "", false, ""
		}
		ex.jsonRPC()
		k := readBodyKey(ex.body.buf, ex.rpc.checked(ex.body.buf), ex.p.keySegs)
		if k.note != "" {
			ex.Note(k.note)
		}
		return k.key, k.ok, k.refuse
	}
	vv, ok := ex.r.Header[ex.p.cfg.KeyHeader]
	if !ok {
		return "", false, ""
	}
	if len(vv) == 0 {
		return "", true, ""
	}
	return vv[0], true, ""
}

// refuse answers 400 with why the proxy will not forward the request, and journals it.
func (ex *Exchange) refuse(why string) {
	ex.Note("refused: " + why)
	ex.Respond(http.StatusBadRequest, http.Header{"Content-Type": {"text/plain; charset=utf-8"}}, []byte("faultproxy: "+why+"\n"))
}

// AddRule validates r and appends it; the error is a *RuleError naming the bad field
// (ErrRuleExists for a name in use, ErrTooManyRules past MaxRules).
func (p *Proxy) AddRule(_ context.Context, r Rule) error { return p.AddRules(r) }

// AddRules validates the rules and appends them in order, all or none: when one is bad
// (its *RuleError has its Index, -1 for a single rule) no rule is added.
func (p *Proxy) AddRules(rules ...Rule) error {
	batch := make([]*activeRule, len(rules))
	for i, r := range rules {
		idx := i
		if len(rules) == 1 {
			idx = -1
		}
		ar, err := compileRule(p.cfg.Faults, r, idx)
		if err != nil {
			return err
		}
		batch[i] = ar
	}
	return p.rules.add(batch...)
}

// DeleteRule removes the named rule; ErrRuleNotFound when there is none.
func (p *Proxy) DeleteRule(_ context.Context, name string) error {
	if !p.rules.remove(name) {
		return fmt.Errorf("delete rule %q: %w", name, ErrRuleNotFound)
	}
	return nil
}

// Reset removes every rule, clears the journal and the attempt counters, and reseeds the
// random source.
func (p *Proxy) Reset(context.Context) error {
	p.rules.reset()
	p.journal.reset()
	return nil
}

// Journal returns the records matching q, in sequence order (at most q.Limit when set).
func (p *Proxy) Journal(_ context.Context, q JournalQuery) ([]Record, error) {
	recs, _ := p.journal.query(q)
	return recs, nil
}

func (p *Proxy) journalPage(q JournalQuery) ([]Record, bool) { return p.journal.query(q) }

// Rules returns the rules in evaluation order with their firing counts.
func (p *Proxy) Rules() []RuleStatus { return p.rules.snapshot() }

// JournalStats reports how many records were appended and dropped since the last Reset.
func (p *Proxy) JournalStats() JournalStats { return p.journal.stats() }

// WaitIdle returns once no attempt is in flight, so the journal holds every attempt made
// so far (a client that gave up may return before the proxy journals its attempt). It
// polls; ctx bounds the wait.
func (p *Proxy) WaitIdle(ctx context.Context) error {
	t := time.NewTicker(2 * time.Millisecond)
	defer t.Stop()
	for p.inFlight.Load() > 0 {
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait idle: %d attempts in flight: %w", p.inFlight.Load(), ctx.Err())
		case <-t.C:
		}
	}
	return nil
}

// CloseIdleConnections closes pooled upstream connections.
func (p *Proxy) CloseIdleConnections() {
	if t, ok := p.transport.(interface{ CloseIdleConnections() }); ok {
		t.CloseIdleConnections()
	}
	if p.direct != nil {
		p.direct.closeIdle()
	}
}

func redactionSet(extra []string) map[string]bool {
	set := make(map[string]bool, len(DefaultRedactedHeaders)+len(extra))
	for _, h := range DefaultRedactedHeaders {
		set[http.CanonicalHeaderKey(h)] = true
	}
	for _, h := range extra {
		set[http.CanonicalHeaderKey(h)] = true
	}
	return set
}

// recordHeaders snapshots the end-to-end request headers for the journal: redacted
// names as "[redacted]", and at most limit bytes of names and values, the rest clipped
// (in name order, so the same request is clipped the same way) and counted.
// The third result is the bytes kept, names and values, for the journal's byte budget.
func (p *Proxy) recordHeaders(h http.Header, limit int) (map[string]string, int, int) {
	out := make(map[string]string, len(h))
	total := 0
	for k, vv := range h {
		var v string
		switch {
		case p.redacted[k]:
			v = "[redacted]"
		case len(vv) == 1:
			v = vv[0]
		default:
			v = strings.Join(vv, ", ")
		}
		out[k] = v
		total += len(k) + len(v)
	}
	clipped, kept := clipRecordHeaders(out, total, limit)
	return out, clipped, kept
}

// clipRecordHeaders keeps at most limit bytes of the recorded headers' names and values
// (total now), clipping values in name order; it returns the bytes clipped and kept.
func clipRecordHeaders(out map[string]string, total, limit int) (int, int) {
	if total <= limit {
		return 0, total
	}
	names := make([]string, 0, len(out))
	for k := range out {
		names = append(names, k)
	}
	sort.Strings(names)
	left, clipped := limit, 0
	for _, k := range names {
		v := out[k]
		keep := min(len(v), max(left-len(k), 0))
		if keep < len(v) {
			clipped += len(v) - keep
			// A copy: a slice of the value would keep all of it alive.
			out[k] = strings.Clone(v[:keep])
		}
		left -= len(k) + keep
	}
	return clipped, total - clipped
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

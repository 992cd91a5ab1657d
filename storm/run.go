package storm

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/faultproxy/client"
	"github.com/idemproof/idemproof/internal/jsonvalue"
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/retryhttp"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/storefault"
	"github.com/idemproof/idemproof/transport"
	"github.com/idemproof/idemproof/transport/contentcoding"
)

// Defaults of Config.
const (
	DefaultOps        = 2000
	DefaultClients    = 32
	DefaultDuration   = 10 * time.Minute
	DefaultAttempts   = 10
	DefaultMaxBackoff = time.Second
	DefaultListed     = 20
)

// retryBackoffMin is a copy's first pause before a retry; it doubles up to MaxBackoff.
const retryBackoffMin = 20 * time.Millisecond

// maxBody bounds what the storm reads of one answer: it keeps a digest and an excerpt of
// it, never the body itself, so its memory grows with the operations, not their bytes.
const maxBody = 4 << 20

// journalBody bounds the committed body the proxy keeps per record (a larger one is not
// compared with its replays: the first success a client saw stands in for it).
const journalBody = 1 << 20

// Config says what storm to run against which target.
type Config struct {
	Profile *profile.Profile
	// Ops is the number of logical operations of the whole storm (default 2,000);
	// a shard runs its part of them.
	Ops int
	// Clients is how many operations run at once (default 32).
	Clients int
	// Mix is the share of each kind of schedule (Mix's defaults).
	Mix Mix
	// Seed deals the schedules; 0 picks one (reported). Keys and entities are fresh in
	// every run whatever the seed.
	Seed int64
	// Duration bounds the whole storm (default 10 minutes); operations not finished by
	// then are counted as not run and the report is incomplete.
	Duration time.Duration
	// Shard and Shards run operations i with i % Shards == Shard-1 (default 1 of 1): a
	// CI matrix runs a larger storm on several machines, each with fresh entities;
	// MergeReports joins the shards' reports.
	Shard, Shards int
	// Schedule, when set, gives every operation this schedule instead of dealing the mix:
	// a replay of a shrunk finding (--schedule).
	Schedule *Schedule
	// Attempts bounds each copy's attempts (default 10); MaxBackoff caps the client's
	// backoff and the Retry-After it honours (default 1s).
	Attempts   int
	MaxBackoff time.Duration
	// Progress, when set, is called as each operation ends (one call at a time).
	Progress func(Progress)
	// NoShrink leaves findings unshrunk.
	NoShrink bool
	// NoPreflight skips the target's preflight (for a caller that ran it).
	NoPreflight bool
	// Listed bounds the operations each category lists (default 20); the counts are
	// always whole.
	Listed int
	// Command is the command line that names this target, which a shrunk finding's
	// repeat command extends (default "idemproof storm --profile <the profile's source>").
	Command string
}

// Progress is how far a storm is.
type Progress struct {
	Done, Total int
	Attempts    int64
	Elapsed     time.Duration
}

func (c Config) withDefaults() Config {
	if c.Ops <= 0 {
		c.Ops = DefaultOps
	}
	if c.Clients <= 0 {
		c.Clients = DefaultClients
	}
	if c.Duration <= 0 {
		c.Duration = DefaultDuration
	}
	if c.Shards <= 0 {
		c.Shard, c.Shards = 1, 1
	}
	if c.Attempts <= 0 {
		c.Attempts = DefaultAttempts
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = DefaultMaxBackoff
	}
	if c.Listed <= 0 {
		c.Listed = DefaultListed
	}
	if c.Seed == 0 {
		c.Seed = time.Now().UnixNano()
	}
	c.Mix = c.Mix.withDefaults()
	return c
}

// Check reports what in cfg (or its profile) the storm cannot run: an error that says
// what to fix.
func (c Config) Check() error {
	p := c.Profile
	switch {
	case p == nil:
		return errors.New("storm: no profile")
	case c.Shards > 0 && (c.Shard < 1 || c.Shard > c.Shards):
		return fmt.Errorf("storm: shard %d/%d: want i/n with 1 <= i <= n", c.Shard, c.Shards)
	case c.Mix.FaultRate < 0 || c.Mix.FaultRate+c.Mix.DuplicateRate+c.Mix.ConcurrentRate+c.Mix.OutageRate > 1:
		return errors.New("storm: the mix's rates must be between 0 and 1 and add up to at most 1")
	}
	if err := p.Validate(); err != nil {
		return fmt.Errorf("storm: profile %s: %w", p.Name, err)
	}
	switch {
	case p.IsStdio():
		return fmt.Errorf("storm: profile %s: transport mcp-stdio is not supported by the storm (each of its clients would start a server process of its own, which keeps its keys apart from the others'); run check for stdio servers, or serve the tool over Streamable HTTP (transport: mcp)", p.Name)
	case p.HasGlobalLedger():
		return fmt.Errorf("storm: profile %s: side_effects.scope is global; the storm judges every operation by its own entity's ledger: give a side_effects.path with {{.Entity}}", p.Name)
	case c.Schedule != nil && c.Schedule.Outage != "" && p.Store == nil:
		return fmt.Errorf("storm: schedule %s needs the profile's store: (the key store behind a store fault point)", c.Schedule)
	case c.Schedule != nil && c.Schedule.Hold && p.Slow == nil:
		return fmt.Errorf("storm: schedule %s needs the profile's slow_operation", c.Schedule)
	}
	return nil
}

// Run runs the storm and judges it. An error means it could not start (bad input, a
// target its profile does not describe, the store point's upstream unreachable);
// findings are in the report.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	p := cfg.Profile
	closeStores, err := scenarios.StartStorePoints([]*profile.Profile{p})
	if err != nil {
		return nil, fmt.Errorf("storm: %w", err)
	}
	defer closeStores()
	if !cfg.NoPreflight {
		if err := scenarios.Preflight(ctx, p); err != nil {
			return nil, fmt.Errorf("storm: %w", err)
		}
	}
	s, err := newStorm(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer s.close()
	rep := s.run(ctx)
	if !cfg.NoShrink && cfg.Schedule == nil {
		rep.Shrunk = shrinkFindings(ctx, cfg, rep, s.found)
	}
	return rep, nil
}

// storm is one run: the proxy in front of the target, the clients, the results.
type storm struct {
	cfg      Config
	p        *profile.Profile
	ctl      faultproxy.Controller
	proxyURL string
	closeFn  func() error
	nonce    string
	attempt  *http.Client
	// tr and cl speak to an MCP tool server (transport: mcp); tr is nil for plain HTTP.
	tr       transport.Transport
	cl       outcome.Classifier
	ledger   *profile.LedgerReader
	outageMu sync.Mutex // outages come one at a time
	attempts atomic.Int64
	found    []opResult // the operations with a finding, for shrinking
}

func newStorm(ctx context.Context, cfg Config) (*storm, error) {
	p := cfg.Profile
	tc, err := p.TLSClientConfig()
	if err != nil {
		return nil, fmt.Errorf("storm: %w", err)
	}
	nonce := make([]byte, 4)
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("storm: mint run nonce: %w", err)
	}
	s := &storm{cfg: cfg, p: p, nonce: hex.EncodeToString(nonce)}
	s.attempt = &http.Client{Transport: transport.NewAttemptClient(tc).Transport, Timeout: p.ClientTimeout.Std(),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	probe := transport.NewProbeClient(10*time.Second, tc)
	s.ledger = p.NewLedgerReader(probe)
	if p.IsMCP() {
		s.cl = p.Classifier()
		s.tr = p.NewTransport(s.cl, probe, tc)
	}
	if p.Proxy != nil {
		s.proxyURL, s.ctl, s.closeFn = p.Proxy.URL, client.New(p.Proxy.Admin, p.Proxy.AdminToken), func() error { return nil }
		return s, nil
	}
	srv, err := faultproxy.Start(ctx, faultproxy.Config{
		Upstream: p.BaseURL, KeyHeader: p.KeyHeader, KeyField: p.KeyField, Seed: cfg.Seed, TLSClientConfig: tc,
		// Each operation reads its key's records as it ends: a small journal suffices,
		// and bounds the storm's memory whatever the target answers.
		JournalCapacity: 4 * cfg.Clients * (maxCopies + 2) * cfg.Attempts, JournalBytes: 8 << 20,
		JournalBodyLimit: journalBody,
	})
	if err != nil {
		return nil, fmt.Errorf("storm: start proxy: %w", err)
	}
	s.proxyURL, s.ctl, s.closeFn = srv.URL(), srv.Proxy(), srv.Close
	return s, nil
}

func (s *storm) close() { _ = s.closeFn() }

// indices are this shard's operations.
func (s *storm) indices() []int {
	var out []int
	for i := 0; i < s.cfg.Ops; i++ {
		if i%s.cfg.Shards == s.cfg.Shard-1 {
			out = append(out, i)
		}
	}
	return out
}

func (s *storm) schedule(i int) Schedule {
	if s.cfg.Schedule != nil {
		return *s.cfg.Schedule
	}
	return deal(s.cfg.Seed, i, s.cfg.Mix, s.p.Slow != nil, s.p.Store != nil)
}

func (s *storm) run(ctx context.Context) *Report {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Duration)
	defer cancel()
	idx := s.indices()
	results := make([]opResult, len(idx))
	ran := make([]bool, len(idx))
	started := time.Now()
	var next atomic.Int64
	var done int
	var progress sync.Mutex
	var wg sync.WaitGroup
	for range min(s.cfg.Clients, len(idx)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				j := int(next.Add(1) - 1)
				if j >= len(idx) || ctx.Err() != nil {
					return
				}
				results[j] = s.runOp(ctx, idx[j])
				ran[j] = ctx.Err() == nil || results[j].settled()
				if s.cfg.Progress != nil {
					progress.Lock()
					done++
					s.cfg.Progress(Progress{Done: done, Total: len(idx), Attempts: s.attempts.Load(), Elapsed: time.Since(started)})
					progress.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(started)
	interrupted := ctx.Err()
	// A fresh context for the ledger: the storm's own may have run out, and what ran
	// must still be judged.
	jctx, jcancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
	defer jcancel()
	var judged []opResult
	for j := range results {
		if ran[j] {
			judged = append(judged, results[j])
		}
	}
	s.readLedgers(jctx, judged)
	rep := s.judge(judged, len(idx), elapsed)
	if interrupted != nil {
		rep.Complete = false
		rep.Interrupted = fmt.Sprintf("%v after %s: %d of %d operations ran", context.Cause(ctx), elapsed.Round(time.Millisecond), len(judged), len(idx))
	}
	return rep
}

// answer is one copy's end as its client saw it.
type answer struct {
	status  int
	class   outcome.Class // an MCP answer's outcome class ("" over plain HTTP: the status says)
	digest  [32]byte
	excerpt string
	err     string // the unknown outcome, when no definite answer came
	// truncated: the answer's body broke off; the client sends the operation again.
	truncated bool
}

func (a answer) success() bool {
	if a.class != "" {
		return a.err == "" && a.class == outcome.Success
	}
	return a.err == "" && a.status >= 200 && a.status <= 299
}

// opResult is one operation: what its clients saw, what the proxy journal and the ledger
// show.
type opResult struct {
	Index    int
	Entity   string
	Key      string
	Schedule Schedule
	answers  []answer
	attempts int
	latency  time.Duration
	// From the journal: attempts that got an after-upstream fault, upstream successes (a
	// 2xx; over MCP, a success by the outcome rules), and the digest of the first
	// committed body it buffered.
	faulted, upstreamSuccesses int
	committed                  *[32]byte
	ledger                     int
	ledgerErr                  string
	buildErr                   string
}

// settled reports whether every copy ended with a definite answer.
func (o opResult) settled() bool {
	for _, a := range o.answers {
		if a.err != "" {
			return false
		}
	}
	return len(o.answers) > 0
}

func (s *storm) runOp(ctx context.Context, i int) (o opResult) {
	p := s.p
	o = opResult{Index: i, Schedule: s.schedule(i), Entity: fmt.Sprintf("storm-%s-s%d-%06d", s.nonce, s.cfg.Shard, i)}
	o.Key = s.mintKey(i)
	started := time.Now()
	defer func() { o.latency = time.Since(started) }()
	if spec, ok := o.Schedule.fault(); ok {
		name := "storm-" + o.Key
		if err := s.ctl.AddRule(ctx, faultproxy.Rule{Name: name, Match: faultproxy.Match{Key: o.Key, Attempts: &faultproxy.Range{From: 1, To: 1}}, Fault: spec}); err != nil {
			o.buildErr = "add rule: " + err.Error()
			return o
		}
		defer s.ctl.DeleteRule(context.WithoutCancel(ctx), name)
	}
	if s.tr != nil {
		return s.runMCPOp(ctx, o)
	}
	path, err := profile.Render(p.Operation.Path, o.Entity)
	if err != nil {
		o.buildErr = err.Error()
		return o
	}
	body, err := profile.Render(p.Operation.Body, o.Entity)
	if err != nil {
		o.buildErr = err.Error()
		return o
	}
	header, err := p.RequestHeaders(p.Operation.Headers, 0, o.Entity)
	if err != nil {
		o.buildErr = err.Error()
		return o
	}
	ops := make([]retryhttp.Operation, max(o.Schedule.Copies, 1))
	for c := range ops {
		h := header.Clone()
		cpath, cbody := path, body
		if o.Schedule.Hold {
			if cpath, cbody, err = p.ApplySlowHook(path, h, body, o.Entity); err != nil {
				o.buildErr = err.Error()
				return o
			}
		}
		if p.KeyField != "" {
			if cbody, err = bodyWithKey(cbody, p.KeyField, o.Key); err != nil {
				o.buildErr = err.Error()
				return o
			}
			h.Set("Content-Type", "application/json")
		}
		ops[c] = retryhttp.Operation{Method: p.Operation.Method, URL: strings.TrimSuffix(s.proxyURL, "/") + cpath, Header: h, Body: []byte(cbody), Key: o.Key}
	}
	return s.sendCopies(ctx, o, len(ops), func(c int, attempts *atomic.Int64) answer {
		return s.send(ctx, c == 0 && o.Schedule.Outage != "", o.Schedule.Outage, ops[c], attempts)
	})
}

// sendCopies sends the operation's copies at once, each with send (its index, the
// operation's attempt counter), and reads the operation's journal once all ended.
func (s *storm) sendCopies(ctx context.Context, o opResult, copies int, send func(c int, attempts *atomic.Int64) answer) opResult {
	o.answers = make([]answer, copies)
	var attempts atomic.Int64
	start := make(chan struct{})
	var wg sync.WaitGroup
	for c := range copies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			o.answers[c] = send(c, &attempts)
		}()
	}
	close(start)
	wg.Wait()
	o.attempts = int(attempts.Load())
	s.attempts.Add(attempts.Load())
	s.readJournal(ctx, &o)
	return o
}

// bodyWithKey puts the key at the profile's key_field of a JSON body, the same bytes on
// every attempt of the operation.
func bodyWithKey(body, field, key string) (string, error) {
	out, err := jsonvalue.SetIn(body, field, jsonvalue.NewString(key))
	if err != nil {
		return "", fmt.Errorf("the key at key_field %s: %w", field, err)
	}
	return out, nil
}

// runMCPOp sends the operation's copies over MCP (mcp.go) and reads its journal.
func (s *storm) runMCPOp(ctx context.Context, o opResult) opResult {
	copies := max(o.Schedule.Copies, 1)
	reqs := make([]*transport.Request, copies)
	for c := range reqs {
		var err error
		if reqs[c], err = s.mcpRequest(o.Entity, o.Key, o.Schedule.Hold); err != nil {
			o.buildErr = err.Error()
			return o
		}
	}
	return s.sendCopies(ctx, o, copies, func(c int, attempts *atomic.Int64) answer {
		return s.sendMCP(ctx, c == 0 && o.Schedule.Outage != "", o.Schedule.Outage, reqs[c], o.Key, attempts)
	})
}

// fault is the proxy fault of the schedule's first attempt, if any: an outage's first
// answer is lost too, so that its retry meets the store out.
func (s Schedule) fault() (faultproxy.FaultSpec, bool) {
	switch {
	case s.Duplicate:
		return faultproxy.FaultSpec{Type: faultproxy.FaultDuplicate, Mode: "sequential"}, true
	case s.Outage != "":
		return afterFaults["after-503"], true
	}
	spec, ok := afterFaults[s.Fault]
	return spec, ok
}

func (s *storm) mintKey(i int) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	if s.p.UUIDKeys() {
		var u [16]byte
		_, _ = rand.Read(u[:])
		u[6] = (u[6] & 0x0f) | 0x40
		u[8] = (u[8] & 0x3f) | 0x80
		x := hex.EncodeToString(u[:])
		return x[:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:]
	}
	return fmt.Sprintf("storm-%s-%d-%s", s.nonce, i, hex.EncodeToString(b[:]))
}

// send runs one copy with the correct retry policy (retryhttp): the same key and body on
// every attempt, 409, 429, 5xx and transport errors retried with capped backoff. With
// outage, the copy's first retry meets that store fault (applied in the pause before it),
// healed in the pause after it, or when the copy ends.
func (s *storm) send(ctx context.Context, outage bool, fault string, op retryhttp.Operation, attempts *atomic.Int64) answer {
	c := &retryhttp.Client{
		HTTPClient:  s.attempt,
		KeyHeader:   s.p.KeyHeader,
		KeyInBody:   s.p.KeyField != "",
		MaxAttempts: s.cfg.Attempts,
		Backoff:     retryhttp.HonourRetryAfter(retryhttp.Exponential(retryBackoffMin, s.cfg.MaxBackoff), s.cfg.MaxBackoff),
		CheckRetry: func(ctx context.Context, resp *http.Response, err error) (bool, error) {
			attempts.Add(1)
			return retryhttp.DefaultCheckRetry(ctx, resp, err)
		},
	}
	if outage {
		var release func()
		pauses := 0
		c.Sleep = func(ctx context.Context, d time.Duration) error {
			err := retryhttp.SleepContext(ctx, d)
			switch pauses++; pauses {
			case 1:
				release = s.storeOutage(fault)
			case 2:
				release()
				release = nil
			}
			return err
		}
		defer func() {
			if release != nil {
				release()
			}
		}()
	}
	// A body that does not arrive whole (a truncated answer) is a transport error to a
	// correct client too: it sends the operation again with the same key.
	var last answer
	for try := 0; try < s.cfg.Attempts && ctx.Err() == nil; try++ {
		if last = s.once(ctx, c, op); !last.truncated {
			return last
		}
	}
	return last
}

// once is one retryhttp.Do of the operation and the answer's body read whole.
func (s *storm) once(ctx context.Context, c *retryhttp.Client, op retryhttp.Operation) answer {
	resp, err := c.Do(ctx, op)
	if err != nil {
		return answer{err: err.Error()}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return answer{status: resp.StatusCode, err: "read body: " + err.Error(), truncated: true}
	}
	if len(raw) > maxBody {
		return answer{status: resp.StatusCode, err: fmt.Sprintf("body over %d bytes: not compared", maxBody)}
	}
	if decoded, err := contentcoding.Decode(resp.Header.Get("Content-Encoding"), raw, maxBody); err == nil {
		raw = decoded
	}
	return answer{status: resp.StatusCode, digest: s.digest(raw), excerpt: excerpt(raw)}
}

// storeOutage applies a store fault for the first attempt of one operation and returns
// the function that heals it; outages come one at a time.
func (s *storm) storeOutage(fault string) func() {
	pt := s.p.Store.Point
	s.outageMu.Lock()
	if err := pt.Set(storefault.Fault(fault), 0); err != nil {
		s.outageMu.Unlock()
		return func() {}
	}
	return func() {
		_ = pt.Heal()
		s.outageMu.Unlock()
	}
}

// readJournal reads what the proxy saw of the operation's key.
func (s *storm) readJournal(ctx context.Context, o *opResult) {
	recs, err := s.ctl.Journal(context.WithoutCancel(ctx), faultproxy.JournalQuery{Key: o.Key})
	if err != nil {
		return
	}
	sort.Slice(recs, func(a, b int) bool { return recs[a].Seq < recs[b].Seq })
	for _, r := range recs {
		if strings.HasPrefix(r.Fault, "after-") || r.Fault == faultproxy.FaultDuplicate {
			o.faulted++
		}
		if s.tr != nil {
			if body, ok := s.mcpCommitted(r); ok {
				o.upstreamSuccesses += max(r.UpstreamCalls, 1)
				if o.committed == nil {
					d := s.digest(body)
					o.committed = &d
				}
			}
			continue
		}
		if r.UpstreamStatus >= 200 && r.UpstreamStatus <= 299 {
			o.upstreamSuccesses += max(r.UpstreamCalls, 1)
			if o.committed == nil && len(r.UpstreamBody) > 0 && r.UpstreamBodyClipped == 0 {
				body := r.UpstreamBody
				if decoded, err := contentcoding.Decode(r.UpstreamContentEncoding, body, maxBody); err == nil {
					body = decoded
				}
				d := s.digest(body)
				o.committed = &d
			}
		}
	}
}

// readLedgers counts every operation's entity, a few at a time.
func (s *storm) readLedgers(ctx context.Context, ops []opResult) {
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(8, len(ops)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				n, err := s.ledger.Count(ctx, ops[j].Entity)
				if err != nil {
					ops[j].ledgerErr = err.Error()
					continue
				}
				ops[j].ledger = n
			}
		}()
	}
	for j := range ops {
		work <- j
	}
	close(work)
	wg.Wait()
}

// digest is a body's SHA-256 as the comparison sees it: JSON by value (members in any
// order, other whitespace), without the profile's volatile fields.
func (s *storm) digest(body []byte) [32]byte {
	return sha256.Sum256(canonicalBody(body, s.p.Expect.VolatileFields))
}

func excerpt(b []byte) string {
	const n = 200
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

package scan

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/gjson"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/faultproxy/stdio"
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/transport"
	mcptr "github.com/idemproof/idemproof/transport/mcp"
	"github.com/idemproof/idemproof/transport/mcpstdio"
	"github.com/idemproof/idemproof/verdict"
)

// runner is what every operation's probes share: the fault proxy in front of the target,
// the transport, the run's nonce and counter.
type runner struct {
	cfg        *Config
	t          *Target
	tr         transport.Transport
	classifier outcome.Classifier
	ctl        controller
	stdio      bool   // the target is a stdio server, behind the fault layer on its pipes
	proxyURL   string // the proxy, where an HTTP operation's path is appended
	mcpURL     string // the proxy with the MCP endpoint's path and query
	header     http.Header
	nonce      string
	seq        atomic.Int64
}

// controller is the fault proxy's, or the stdio fault layer's, rules and journal.
type controller interface {
	AddRule(context.Context, faultproxy.Rule) error
	DeleteRule(context.Context, string) error
	Journal(context.Context, faultproxy.JournalQuery) ([]faultproxy.Record, error)
	JournalStats() faultproxy.JournalStats
}

var (
	_ controller = (*faultproxy.Proxy)(nil)
	_ controller = (*faultproxy.Engine)(nil)
)

// Run probes every operation the plan probes (Target from Enumerate), several at once
// (Config.Parallel), each one's probes in turn within Config.OperationTimeout, through an
// in-process fault proxy; and judges each into its row. Operations that are not probed
// get rows saying why. A cancelled ctx ends the probes under way as UNKNOWN and the
// report says it was interrupted.
func Run(ctx context.Context, cfg *Config, t *Target) (*Report, error) {
	started := time.Now()
	rep := &Report{SchemaVersion: ReportSchemaVersion, Tool: cfg.Tool, Target: t, Seed: cfg.Seed, Started: started}
	rows := make([]Row, len(t.Operations))
	var todo []int
	for i, op := range t.Operations {
		if op.Probed() {
			todo = append(todo, i)
			continue
		}
		rows[i] = notProbed(op)
	}
	if len(todo) > 0 {
		r, closeProxy, err := newRunner(ctx, cfg, t)
		if err != nil {
			return nil, err
		}
		defer closeProxy()
		var mu sync.Mutex
		work := make(chan int)
		var wg sync.WaitGroup
		for range min(cfg.parallel(), len(todo)) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range work {
					row := r.probe(ctx, t.Operations[i])
					mu.Lock()
					rows[i] = row
					if cfg.Progress != nil {
						cfg.Progress(row)
					}
					mu.Unlock()
				}
			}()
		}
	feed:
		for _, i := range todo {
			select {
			case work <- i:
			case <-ctx.Done():
				break feed
			}
		}
		close(work)
		wg.Wait()
		for _, i := range todo {
			if rows[i].Operation == nil {
				rows[i] = interrupted(t.Operations[i], ctx)
			}
		}
	}
	if ctx.Err() != nil {
		rep.Interrupted = context.Cause(ctx).Error()
	}
	for _, row := range rows {
		for i := range row.Cells {
			row.Cells[i].Check = Checks[i]
		}
	}
	rep.Rows = rows
	rep.DurationMS = float64(time.Since(started).Microseconds()) / 1000
	rep.Headline = headline(rep)
	return rep, nil
}

// newRunner starts the fault proxy in front of the target.
func newRunner(ctx context.Context, cfg *Config, t *Target) (*runner, func(), error) {
	if len(t.Command) > 0 {
		return newStdioRunner(cfg, t)
	}
	u, err := url.Parse(t.Endpoint)
	if err != nil {
		return nil, nil, fmt.Errorf("scan %s: %w", t.Endpoint, err)
	}
	upstream := t.Endpoint
	if t.Kind == KindMCP {
		upstream = u.Scheme + "://" + u.Host
	}
	srv, err := faultproxy.Start(ctx, faultproxy.Config{
		Upstream: upstream, Seed: cfg.Seed, TLSClientConfig: cfg.TLS,
		// The lost answer is compared with the repeat's, which is read up to
		// MaxResponseBody: the journal keeps as much of it.
		JournalBodyLimit: transport.MaxResponseBody,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("start the fault proxy: %w", err)
	}
	r := &runner{cfg: cfg, t: t, ctl: srv.Proxy(), proxyURL: srv.URL(), header: callHeader(cfg), nonce: newNonce()}
	attempts := transport.NewAttemptClient(cfg.TLS)
	probe := transport.NewProbeClient(cfg.callTimeout(), cfg.TLS)
	if t.Kind == KindMCP {
		r.classifier = outcome.NewRules(mcptr.DefaultOutcomes(nil), outcome.Statuses{})
		r.tr = &mcptr.Transport{Client: attempts, Probe: probe, Classifier: r.classifier}
		r.mcpURL = srv.URL() + u.EscapedPath()
		if u.RawQuery != "" {
			r.mcpURL += "?" + u.RawQuery
		}
	} else {
		r.classifier = outcome.Statuses{InFlight: http.StatusConflict, Mismatch: http.StatusUnprocessableEntity}
		r.tr = &transport.HTTP{Client: attempts, Probe: probe, Classifier: r.classifier}
	}
	return r, func() { srv.Close() }, nil
}

// newStdioRunner puts the fault layer (faultproxy/stdio) on the pipes of the target's
// server, which it starts: every call goes on the one connection, as an agent host's do,
// and a call's ProbeHeader becomes an attribute of its line, which the layer's rules
// match and its journal keeps (the server never sees it).
func newStdioRunner(cfg *Config, t *Target) (*runner, func(), error) {
	cmd := stdio.Command{Args: t.Command, Dir: t.Dir}
	classifier := outcome.NewRules(mcptr.DefaultOutcomes(nil), outcome.Statuses{})
	tr := &mcpstdio.Transport{Command: cmd, Classifier: classifier, Options: mcpstdio.Options{ClientName: "idemproof-scan", StartTimeout: cfg.StartTimeout}}
	layer, err := stdio.New(stdio.Config{
		Command: cmd, Seed: cfg.Seed,
		// The lost answer is compared with the repeat's: the journal keeps all of it.
		JournalBodyLimit: transport.MaxResponseBody,
		Classify: func(line []byte) string {
			body := tr.Comparable(line, "")
			if body == nil {
				return string(outcome.Info)
			}
			return string(classifier.Classify(outcome.Answer{Status: http.StatusOK, Body: body}))
		},
	})
	if err != nil {
		return nil, nil, fmt.Errorf("start the fault layer: %w", err)
	}
	tr.Dial = func() (mcpstdio.Conn, error) { return layer.Connect() }
	r := &runner{cfg: cfg, t: t, tr: tr, classifier: classifier, ctl: layer.Engine(), stdio: true,
		header: callHeader(cfg), nonce: newNonce()}
	return r, func() {
		tr.Close()
		layer.Close()
	}, nil
}

func newNonce() string {
	nonce := make([]byte, 4)
	_, _ = rand.Read(nonce)
	return hex.EncodeToString(nonce)
}

// probe runs one operation's probes in turn and judges them.
func (r *runner) probe(ctx context.Context, op *Operation) (row Row) {
	started := time.Now()
	ctx, cancel := context.WithTimeout(ctx, r.cfg.operationTimeout())
	defer cancel()
	p := &prober{runner: r, op: op, snd: r.tr.Open()}
	defer p.snd.Close()
	row = Row{Operation: op, Cells: make([]Cell, len(Checks))}
	set := func(c Check, v Cell) {
		for i, cc := range Checks {
			if cc == c {
				row.Cells[i] = v
			}
		}
	}
	defer func() {
		row.Calls = int(p.calls.Load())
		row.Duration = time.Since(started)
		row.DurationMS = float64(row.Duration.Microseconds()) / 1000
	}()

	d := p.detect(ctx)
	if d.problem != "" {
		stopped := cell(verdict.Unknown, "not probed further: %s", timedOut(ctx, d.problem))
		set(CheckKey, judgeKey(op, execUnknown))
		for _, c := range []Check{CheckReplay, CheckChanged, CheckConcurrent, CheckAnnotation} {
			set(c, stopped)
		}
		return row
	}
	row.PerExecution = d.field
	by := evidenceBy{field: d.field}

	lost, replayCount := p.replay(ctx)
	lost.err = timedOut(ctx, lost.err)
	by.ledger = replayCount
	replay, execs := judgeReplay(lost, by, r.t.Kind)
	if d.field == "" && d.note != "" && replay.Verdict == verdict.Unknown {
		replay.Evidence += " (" + d.note + ")"
	}
	set(CheckReplay, replay)
	set(CheckKey, judgeKey(op, execs))
	var readOnly *counted
	if op.ReadOnly {
		readOnly = replayCount
	}
	set(CheckAnnotation, judgeAnnotation(op, replay, execs, readOnly))

	switch {
	case op.Key == nil:
		set(CheckChanged, cell(verdict.NA, "takes no key: no key to reuse with other arguments"))
		set(CheckConcurrent, cell(verdict.NA, "takes no key: two copies are two calls"))
		return row
	case op.Request.Change == nil && (op.Request.Body == "" || op.Request.Body == "{}"):
		set(CheckChanged, cell(verdict.NA, "takes no argument besides its key: no changed request to send"))
	case op.Request.Change == nil:
		set(CheckChanged, cell(verdict.Unknown, "no argument the scan may change (a number, a free string, a boolean or an enum): name one in --args (change:)"))
	default:
		o, n := p.changed(ctx)
		o.err = timedOut(ctx, o.err)
		c := judgeChanged(o, evidenceBy{field: d.field, ledger: n}, r.t.Kind)
		if c.Verdict == verdict.Pass {
			row.Mismatch = refusal(o.changed)
		}
		set(CheckChanged, c)
	}
	set(CheckConcurrent, p.concurrentCell(ctx, r.t.Kind, d.field, &row))
	return row
}

// ConcurrentPairs bounds the pairs of copies the concurrency probe sends; it stops once
// ConcurrentMet of them met at the server. A race window is narrow on a fast server, a
// pair that met there may still miss it, and over plain HTTP (a fresh connection per
// call) some pairs never meet at all.
const (
	ConcurrentPairs = 10
	ConcurrentMet   = 5
)

// concurrentCell sends pairs of copies, each with a key of its own, until ConcurrentMet
// met at the server or ConcurrentPairs were sent, and judges them together: any pair
// with two executions FAILs (and ends the probe); a PASS needs every pair that met to
// have made one execution, and at least one to have met; otherwise the last pair's
// UNKNOWN says why.
func (p *prober) concurrentCell(ctx context.Context, kind Kind, field string, row *Row) Cell {
	var last, passed Cell
	met, tries := 0, 0
	for tries < ConcurrentPairs && met < ConcurrentMet && ctx.Err() == nil {
		tries++
		o, n := p.concurrently(ctx)
		o.err = timedOut(ctx, o.err)
		o.tries = tries
		for _, a := range []transport.Answer{o.a, o.b} {
			if looksInFlight(kind, a) {
				row.InFlight = refusal(a)
			}
		}
		last = judgeConcurrent(o, evidenceBy{field: field, ledger: n}, kind)
		switch {
		case last.Verdict == verdict.Fail:
			if kind == KindMCP && !p.stdio && strings.Contains(last.Evidence, "executions for one key") {
				last.Evidence += " (each copy on an MCP session of its own, as two clients' calls come: a key must outlive its session)"
			}
			if tries > 1 {
				last.Evidence += fmt.Sprintf(" (pair %d; the pairs before it made one execution each)", tries)
			}
			return last
		case o.err != "":
			return last
		case last.Verdict == verdict.Pass:
			met++
			passed = last
		}
	}
	if met == 0 {
		return last
	}
	passed.Evidence += fmt.Sprintf(" (%d of %d pairs met at the server, each with one execution)", met, tries)
	return passed
}

// refusal is what a starter profile needs of a refusal: its status and JSON-RPC code.
func refusal(a transport.Answer) *Refusal {
	r := &Refusal{Status: a.Status}
	if c := gjson.GetBytes(a.Body, "error.code"); c.Exists() && c.Type == gjson.Number {
		code := c.Int()
		r.Code = &code
	}
	return r
}

// timedOut says a probe's error came from the operation's time limit or an interrupt.
func timedOut(ctx context.Context, msg string) string {
	if msg == "" || ctx.Err() == nil {
		return msg
	}
	return msg + " (" + context.Cause(ctx).Error() + ")"
}

// notProbed is the row of an operation the plan does not probe: whether it takes a key is
// still known from its description; the rest is N/A (skipped on purpose) or UNKNOWN (it
// could not be probed).
func notProbed(op *Operation) Row {
	row := Row{Operation: op, Cells: make([]Cell, len(Checks))}
	why := cell(verdict.NA, "not probed: %s", op.Skip)
	if op.Skip == "" {
		why = cell(verdict.Unknown, "not probed: %s", op.Problem)
	}
	for i, c := range Checks {
		row.Cells[i] = why
		if c == CheckKey {
			row.Cells[i] = judgeKey(op, execUnknown)
		}
	}
	return row
}

// interrupted is the row of an operation whose probes never started.
func interrupted(op *Operation, ctx context.Context) Row {
	row := notProbed(op)
	stopped := cell(verdict.Unknown, "not probed: the scan was interrupted (%v)", context.Cause(ctx))
	for i, c := range Checks {
		if c != CheckKey {
			row.Cells[i] = stopped
		}
	}
	return row
}

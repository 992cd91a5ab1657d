package scan

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/internal/jsonvalue"
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/transport"
)

// ProbeHeader tags every call a probe makes, one value per probe step (a call and its
// repeats share it): the fault proxy's rules match it, and its journal is searched by it.
// The key and the arguments are left alone, whatever placement the operation uses.
const ProbeHeader = "X-Idemproof-Scan"

// maxInFlightRetries bounds the retries of an answer that says the original still runs.
const maxInFlightRetries = 5

// prober probes one operation through the run's fault proxy.
type prober struct {
	*runner
	op    *Operation
	snd   transport.Sender
	calls atomic.Int64
}

// call is one call of a probe: its step's tag, its key ("" for none), its entity, and
// whether it sends the changed arguments.
type call struct {
	tag, key, entity string
	changed          bool
	// session names the MCP session the call goes on ("" the scan's one): the copies of
	// the concurrency probe go on sessions of their own, as two clients' would, since a
	// server may run one session's calls one at a time.
	session string
}

// request builds a call's request, and returns the arguments it sends (rendered).
func (p *prober) request(c call) (*transport.Request, []byte, error) {
	r := p.op.Request
	tmpl := r.Body
	if c.changed {
		tmpl = r.Change.Body
	}
	body, err := profile.Render(tmpl, c.entity)
	if err != nil {
		return nil, nil, fmt.Errorf("render the arguments: %w", err)
	}
	header := p.header.Clone()
	for k, v := range r.Header {
		rv, err := profile.Render(v, c.entity)
		if err != nil {
			return nil, nil, fmt.Errorf("render header %s: %w", k, err)
		}
		header.Set(k, rv)
	}
	session := header.Clone()
	header.Set(ProbeHeader, c.tag)
	key := p.op.Key
	if c.key != "" && key.Place == PlaceHeader {
		header.Set(key.Name, c.key)
	}
	sent := []byte(body)
	if p.t.Kind == KindMCP {
		if body == "" {
			body = "{}"
		}
		framed, err := p.tr.Frame(p.op.Name, []byte(body))
		if err != nil {
			return nil, nil, err
		}
		if c.key != "" && key.Place != PlaceHeader {
			if framed, err = setMember(framed, key.Field(KindMCP), c.key); err != nil {
				return nil, nil, err
			}
		}
		name := "scan"
		if c.session != "" {
			name += "/" + c.session
		}
		return &transport.Request{URL: p.mcpURL, Body: framed, Header: header, Session: name, SessionHeader: session}, sent, nil
	}
	path, err := profile.Render(r.Path, c.entity)
	if err != nil {
		return nil, nil, fmt.Errorf("render the path: %w", err)
	}
	payload := []byte(body)
	if c.key != "" && key.Place == PlaceArgument {
		if payload, err = setMember(payload, key.Field(KindOpenAPI), c.key); err != nil {
			return nil, nil, err
		}
	}
	if len(payload) == 0 {
		payload = nil
	}
	return &transport.Request{URL: p.proxyURL + path, Method: p.op.Method, Body: payload, Header: header}, sent, nil
}

// setMember writes the key at a dotted path of a JSON document, keeping the rest as it is.
func setMember(doc []byte, field, key string) ([]byte, error) {
	out, err := jsonvalue.SetIn(string(doc), field, jsonvalue.NewString(key))
	if err != nil {
		return nil, fmt.Errorf("put the key in the request: %w", err)
	}
	return []byte(out), nil
}

// send makes one call.
func (p *prober) send(ctx context.Context, c call) (transport.Answer, []byte, error) {
	req, sent, err := p.request(c)
	if err != nil {
		return transport.Answer{}, nil, err
	}
	p.calls.Add(1)
	a, err := p.snd.Send(ctx, req, p.cfg.callTimeout())
	return a, sent, err
}

// prepare sets up what the call needs before it is sent (its MCP session), when the
// transport can.
func (p *prober) prepare(ctx context.Context, c call) error {
	pr, ok := p.snd.(transport.Preparer)
	if !ok {
		return nil
	}
	req, _, err := p.request(c)
	if err != nil {
		return err
	}
	return pr.Prepare(ctx, req)
}

// settle repeats a call while its answer says the original still runs (at most
// maxInFlightRetries times, after each answer's own retry hint), and returns the last
// answer and how many in-flight answers came before it.
func (p *prober) settle(ctx context.Context, c call, a transport.Answer) (transport.Answer, int, error) {
	n := 0
	for n < maxInFlightRetries && looksInFlight(p.t.Kind, a) {
		select {
		case <-ctx.Done():
			return a, n, context.Cause(ctx)
		case <-time.After(retryWait(a)):
		}
		next, _, err := p.send(ctx, c)
		if err != nil {
			return a, n, err
		}
		a, n = next, n+1
	}
	return a, n, nil
}

// fresh mints a probe step's tag, entity and (for a keyed operation) key.
func (p *prober) fresh() call {
	n := p.seq.Add(1)
	c := call{tag: fmt.Sprintf("%s-%d", p.nonce, n), entity: fmt.Sprintf("ip-scan-%s-%03d", p.nonce, n)}
	if p.op.Key != nil {
		c.key = newKey()
	}
	return c
}

// newKey is a fresh random UUID (version 4): every target that takes keys takes these.
func newKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// count reads the operation's ledger for an entity.
func (p *prober) count(ctx context.Context, entity string) (int, error) {
	l := p.op.Ledger
	led := transport.Ledger{Header: p.header.Clone(), Count: l.Count}
	if l.Tool != "" {
		args, err := profile.Render(l.Arguments, entity)
		if err != nil {
			return 0, err
		}
		if args == "" {
			args = "{}"
		}
		led.Tool, led.URL, led.Arguments = l.Tool, p.t.Endpoint, []byte(args)
	} else {
		path, err := profile.Render(l.Path, entity)
		if err != nil {
			return 0, err
		}
		led.Method, led.URL = l.Method, p.t.Endpoint+path
	}
	ctx, cancel := context.WithTimeout(ctx, p.cfg.callTimeout())
	defer cancel()
	return p.tr.Count(ctx, led)
}

// counting reads the ledger before a probe step and returns what reads it after: the
// step's executions. Without a ledger both are nil.
func (p *prober) counting(ctx context.Context, entity string) func() *counted {
	if p.op.Ledger == nil {
		return func() *counted { return nil }
	}
	what := p.op.Ledger.String()
	before, err := p.count(ctx, entity)
	if err != nil {
		return func() *counted { return &counted{what: what, err: err.Error()} }
	}
	return func() *counted {
		after, err := p.count(ctx, entity)
		if err != nil {
			return &counted{what: what, err: err.Error()}
		}
		return &counted{what: what, n: after - before}
	}
}

// detected is what the first two calls showed: whether the operation answers at all with
// its arguments, and its per-execution value.
type detected struct {
	problem string // why nothing further is probed
	field   string // the per-execution value's path ("" none found)
	note    string // why none was found, when a second call failed
}

// detect calls the operation twice with fresh keys (or no key) and entities, and looks
// for a member that differs between the two executions.
func (p *prober) detect(ctx context.Context) detected {
	c1, c2 := p.fresh(), p.fresh()
	a1, sent1, err := p.send(ctx, c1)
	switch {
	case err != nil:
		return detected{problem: "could not call it: " + err.Error()}
	case a1.Class == outcome.Info:
		return detected{problem: fmt.Sprintf("the call was not answered (%s; --call-timeout %s)", a1.Err, p.cfg.callTimeout())}
	case a1.Class != outcome.Success:
		return detected{problem: fmt.Sprintf("the call with the arguments from %s was answered %s: give working arguments in --args", p.op.Request.From, describe(p.t.Kind, a1))}
	}
	a2, sent2, err := p.send(ctx, c2)
	switch {
	case err != nil:
		return detected{note: "a second call could not be made: " + err.Error()}
	case a2.Class != outcome.Success:
		return detected{note: "a second execution with a fresh key got " + describe(p.t.Kind, a2)}
	}
	return detected{field: perExecution(
		execution{body: a1.Body, key: c1.key, entity: c1.entity, sent: sent1},
		execution{body: a2.Body, key: c2.key, entity: c2.entity, sent: sent2})}
}

// replay loses the first call's answer after the server committed it (the proxy resets
// the connection once the server's answer is in), then repeats the call: with the same
// key, or, for an operation that takes none, as it is.
func (p *prober) replay(ctx context.Context) (lostAnswer, *counted) {
	c := p.fresh()
	o := lostAnswer{keyed: c.key != ""}
	after := p.counting(ctx, c.entity)
	rule := faultproxy.Rule{Name: "scan-" + c.tag, Count: 1,
		Match: faultproxy.Match{Headers: map[string]string{ProbeHeader: c.tag}},
		Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterReset}}
	if err := p.ctl.AddRule(ctx, rule); err != nil {
		o.err = "add the proxy's rule: " + err.Error()
		return o, nil
	}
	defer p.ctl.DeleteRule(context.WithoutCancel(ctx), rule.Name) //nolint:errcheck // a rule that fired once is spent anyway
	since := p.ctl.JournalStats().Total
	if err := p.lose(ctx, c, since); err != nil {
		o.err = err.Error()
		return o, nil
	}
	a, _, err := p.send(ctx, c)
	if err == nil {
		a, o.inFlight, err = p.settle(ctx, c, a)
	}
	if err != nil {
		o.err = err.Error()
		return o, nil
	}
	o.repeat = a
	o.committed = p.lost(ctx, c.tag, since)
	return o, after()
}

// lose makes the call whose answer the rule loses. Over HTTP the reset ends it at once.
// On a pipe a lost line is silence: the call is given up as soon as the layer has
// journaled the answer it kept from the client, instead of waiting out the call timeout,
// which would tell nothing more.
func (p *prober) lose(ctx context.Context, c call, since uint64) error {
	if !p.stdio {
		_, _, err := p.send(ctx, c)
		return err
	}
	callCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, _, err := p.send(callCtx, c)
		done <- err
	}()
	journaled := make(chan struct{})
	go func() {
		defer close(journaled)
		p.lost(callCtx, c.tag, since)
	}()
	select {
	case err := <-done:
		cancel()
		<-journaled
		return err
	case <-journaled:
		cancel()
		<-done
		return nil
	}
}

// lost is the proxy's record of the first call of a step: the server's answer to it,
// which the client never saw.
func (p *prober) lost(ctx context.Context, tag string, since uint64) *committed {
	deadline := time.Now().Add(p.cfg.callTimeout())
	for {
		recs, _ := p.ctl.Journal(ctx, faultproxy.JournalQuery{Since: since})
		for _, r := range recs {
			if r.Headers[ProbeHeader] != tag {
				continue
			}
			c := &committed{reached: r.ReachedUpstream, status: r.UpstreamStatus, faulted: r.Fault != "", note: r.Note}
			if r.UpstreamBody != nil && r.UpstreamBodyClipped == 0 {
				c.body = p.tr.Comparable(r.UpstreamBody, r.UpstreamContentEncoding)
			}
			c.class = p.classifier.Classify(outcome.Answer{Status: r.UpstreamStatus, Body: c.body})
			return c
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil
		}
		time.Sleep(5 * time.Millisecond) // the proxy journals an attempt as it ends on its side
	}
}

// changed sends the call, then the same key with one argument changed; a refusal is
// followed by the changed arguments under a fresh key and entity (the control).
func (p *prober) changed(ctx context.Context) (changedRequest, *counted) {
	c := p.fresh()
	o := changedRequest{what: p.op.Request.Change.What}
	after := p.counting(ctx, c.entity)
	var err error
	if o.original, _, err = p.send(ctx, c); err != nil {
		o.err = err.Error()
		return o, nil
	}
	alt := c
	alt.changed = true
	alt.tag = p.fresh().tag
	o.changed, _, err = p.send(ctx, alt)
	if err == nil {
		o.changed, _, err = p.settle(ctx, alt, o.changed)
	}
	if err != nil {
		o.err = err.Error()
		return o, nil
	}
	if o.changed.Class != outcome.Success && o.changed.Class != outcome.Info {
		ctl := p.fresh()
		ctl.changed = true
		a, _, err := p.send(ctx, ctl)
		if err != nil {
			o.err = err.Error()
			return o, nil
		}
		o.control = &a
	}
	return o, after()
}

// concurrently sends two copies of one call, one key, at once; a copy that did not
// succeed is retried (settled) once the other answered. Whether the copies met at the
// server — both sent to it before either was answered, or one refused as in flight —
// is read from the fault layer's journal: a fast server may answer the first before the
// second arrives, and then nothing concurrent was tested.
func (p *prober) concurrently(ctx context.Context) (concurrent, *counted) {
	c := p.fresh()
	var o concurrent
	after := p.counting(ctx, c.entity)
	since := p.ctl.JournalStats().Total
	var copies [2]call
	for i := range copies {
		copies[i] = c
		if p.t.Kind == KindMCP && !p.stdio {
			// Over stdio a session is a server process, with state of its own: both
			// copies stay on the scan's one.
			copies[i].session = fmt.Sprintf("copy-%d", i+1)
		}
		if err := p.prepare(ctx, copies[i]); err != nil {
			o.err = err.Error()
			return o, nil
		}
	}
	var answers [2]transport.Answer
	var errs [2]error
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range copies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			answers[i], _, errs[i] = p.send(ctx, copies[i])
		}()
	}
	close(start)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			o.err = err.Error()
			return o, nil
		}
	}
	o.a, o.b = answers[0], answers[1]
	o.met = looksInFlight(p.t.Kind, o.a) || looksInFlight(p.t.Kind, o.b) || p.metAtServer(ctx, c.tag, since)
	if (o.a.Class == outcome.Success) != (o.b.Class == outcome.Success) {
		retry, _, err := p.send(ctx, c)
		if err == nil {
			retry, _, err = p.settle(ctx, c, retry)
		}
		if err != nil {
			o.err = err.Error()
			return o, nil
		}
		o.retry = &retry
	}
	return o, after()
}

// metAtServer reports whether the journal shows the step's first two calls at the
// server at once: each sent to it before the other was answered.
func (p *prober) metAtServer(ctx context.Context, tag string, since uint64) bool {
	deadline := time.Now().Add(2 * time.Second) // the layer journals a call as it ends on its side
	for {
		recs, _ := p.ctl.Journal(ctx, faultproxy.JournalQuery{Since: since})
		if met, seen := metIn(recs, tag); seen {
			return met
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// metIn reports whether the first two records of the step tagged tag that reached the
// server were there at once, each sent before the other was answered; seen is false
// while the journal holds fewer than two.
func metIn(recs []faultproxy.Record, tag string) (met, seen bool) {
	var spans [][2]time.Time
	for _, r := range recs {
		if r.Headers[ProbeHeader] == tag && r.ReachedUpstream {
			start := r.Time.Add(millisDuration(r.ForwardedAfterMillis))
			spans = append(spans, [2]time.Time{start, start.Add(millisDuration(r.UpstreamMillis))})
		}
	}
	if len(spans) < 2 {
		return false, false
	}
	a, b := spans[0], spans[1]
	return a[0].Before(b[1]) && b[0].Before(a[1]), true
}

func millisDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

// header is the scan's own headers on every call: --header, then the --args file's.
func callHeader(cfg *Config) http.Header {
	h := cfg.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	if cfg.Args != nil {
		for k, v := range cfg.Args.Headers {
			h.Set(k, v)
		}
	}
	return h
}

package scenarios

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/verdict"
)

// againSuffix names the second sending of a Twice step: "proxied" then "proxied-again".
const againSuffix = "-again"

// MaxKeepAliveConns bounds the connections a KeepAlive step uses, per host.
const MaxKeepAliveConns = 4

// newKeepAliveClient is the one client of the runner that reuses connections: at most
// MaxKeepAliveConns per host, kept alive between attempts. Zero-copy header parsers that
// keep a key as a view of the connection's read buffer only go wrong when one connection
// carries many requests, which a fresh connection per attempt never shows. tc verifies an
// https:// target (nil: the system's roots); the client uses a clone of it.
func newKeepAliveClient(tc *tls.Config) *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
			MaxConnsPerHost:     MaxKeepAliveConns,
			MaxIdleConnsPerHost: MaxKeepAliveConns,
			IdleConnTimeout:     30 * time.Second,
			DisableCompression:  true,
			TLSClientConfig:     tc.Clone(),
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// sendKeySet sends a KeySet step: Copies requests, copy i with the set's key i, at most
// MaxKeepAliveConns at once (over as many reused connections when KeepAlive is set).
//
// Why keep-alive does not hide attempts here: Go's transport silently resends a request
// on a broken reused connection only when it can rewind the body (GetBody) and the
// request looks replayable (an Idempotency-Key header makes it so). Every request here
// has GetBody cleared, so a broken connection fails that attempt (info) instead of
// resending it; each attempt is on the wire at most once, and the proxy journal counts
// what arrived.
func (e *execution) sendKeySet(ctx context.Context, st Step, attempt int, started chan<- struct{}) error {
	n := max(st.Copies, 1)
	if k, ok := e.t.plan.keysFor(st.Name); ok {
		n = k // fewer, for a target too slow for all of them (plan.go)
	}
	var invoked sync.WaitGroup
	invoked.Add(n)
	if started != nil {
		go func() { invoked.Wait(); close(started) }()
	}
	base := e.t.proxyURL
	direct := st.Direct && e.t.p.BaseURL != ""
	if direct {
		base = e.t.p.BaseURL
	}
	reqs, repeats := make([]*http.Request, n), make([]*http.Request, n)
	keys := make([]string, n)
	for i := range reqs {
		keys[i] = e.keys.setKey(st.KeySet, i)
		one := st
		one.Key = KeyScenario
		entity, err := e.sideEntity(ctx, fmt.Sprintf("-%s%02d", st.KeySet, i/keysPerSideEntity), true)
		if err != nil {
			invoked.Add(-n)
			return fmt.Errorf("step %s: %w", st.Name, err)
		}
		spec, err := e.t.stepRequest(base, entity, scenarioKeys{main: keys[i]}, one, e.marked[st.Name])
		if err == nil {
			reqs[i], err = spec.newRequest()
		}
		if err != nil {
			invoked.Add(-n)
			return fmt.Errorf("step %s: %w", st.Name, err)
		}
		reqs[i].GetBody = nil
		if st.Twice {
			if repeats[i], err = spec.newRequest(); err != nil {
				invoked.Add(-n)
				return fmt.Errorf("step %s: %w", st.Name, err)
			}
			repeats[i].GetBody = nil
		}
	}
	e.mu.Lock()
	for _, k := range keys {
		if !direct {
			e.used[k] = true // a direct attempt is never in the journal
		}
	}
	e.mu.Unlock()
	client := e.t.client
	if st.KeepAlive {
		client = newKeepAliveClient(e.t.tls)
		defer client.CloseIdleConnections()
	}
	timeout := e.t.attemptTimeout(st.Hook, false)
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(n, MaxKeepAliveConns); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				e.rec.invoke(i, attempt, keys[i], st.Name)
				invoked.Done()
				op := sendTraced(ctx, client, reqs[i], timeout, e.t.keepHeaders(), e.t.classifier)
				done := e.rec.complete(i, attempt, keys[i], st.Name, op)
				e.mu.Lock()
				if e.firstAnswer.IsZero() {
					e.firstAnswer = done
				}
				e.mu.Unlock()
				if st.Twice {
					again := st.Name + againSuffix
					e.rec.invoke(i, attempt+1, keys[i], again)
					op := sendTraced(ctx, client, repeats[i], timeout, e.t.keepHeaders(), e.t.classifier)
					e.rec.complete(i, attempt+1, keys[i], again, op)
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		work <- i
	}
	close(work)
	wg.Wait()
	return ctx.Err()
}

// keysPerSideEntity is how many keys of a key set act on one side entity: few enough
// that a ledger read as a paginated list (Stripe's default page holds 10) shows them all.
const keysPerSideEntity = 10

// sideEntity is the entity named by the scenario's entity with suffix: with
// entity_setup one created for it (once per suffix). A counted one's ledger is read with
// the scenario's and added to the operation's count.
func (e *execution) sideEntity(ctx context.Context, suffix string, counted bool) (string, error) {
	e.mu.Lock()
	entity, ok := e.sideByName[suffix]
	e.mu.Unlock()
	if ok {
		return entity, nil
	}
	entity, err := e.t.createEntity(ctx, e.entity+suffix)
	if err != nil {
		return "", err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.sideByName == nil {
		e.sideByName = map[string]string{}
	}
	e.sideByName[suffix] = entity
	if counted {
		e.sideEntities = append(e.sideEntities, entity)
	}
	return entity, nil
}

// sendTraced is send that also records whether the attempt went over a reused
// connection: keys can alias on a kept-alive connection only if there was one.
func sendTraced(ctx context.Context, c *http.Client, req *http.Request, timeout time.Duration, keep []string, cl outcome.Classifier) verdict.Op {
	var reused atomic.Bool
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused.Store(i.Reused) }})
	op := send(ctx, c, req, timeout, keep, cl)
	op.ReusedConn = reused.Load()
	return op
}

// manyKeys is the number of keys past which the journal is read in one query and
// filtered here: a key set of hundreds would otherwise scan the whole journal once per
// key.
const manyKeys = 16

// journalOfKeys returns the journal records of the keys, in no particular order.
func (t *target) journalOfKeys(ctx context.Context, keys []string) ([]faultproxy.Record, error) {
	if len(keys) <= manyKeys {
		var all []faultproxy.Record
		for _, k := range keys {
			recs, err := t.ctl.Journal(ctx, faultproxy.JournalQuery{Key: k})
			if err != nil {
				return nil, err
			}
			all = append(all, recs...)
		}
		return all, nil
	}
	want := make(map[string]bool, len(keys))
	for _, k := range keys {
		want[k] = true
	}
	recs, err := t.ctl.Journal(ctx, faultproxy.JournalQuery{})
	if err != nil {
		return nil, err
	}
	out := recs[:0]
	for _, r := range recs {
		if want[r.Key] {
			out = append(out, r)
		}
	}
	return out, nil
}

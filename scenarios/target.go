package scenarios

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/idemproof/idemproof/downstream"
	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/faultproxy/client"
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/transport"
	"github.com/idemproof/idemproof/transport/contentcoding"
)

// target is one profile made runnable: where attempts go (through a fault proxy), the
// proxy's controller, and the ledger probe.
type target struct {
	p        *profile.Profile
	proxyURL string
	ctl      faultproxy.Controller
	client   *http.Client // plain HTTP attempts of steps that choose their client (send)
	probe    *http.Client
	closeFn  func() error
	// classifier turns complete answers into outcome classes (the profile's rules).
	classifier outcome.Classifier
	// tr frames, sends and reads the ledger: plain HTTP or MCP (transport/).
	tr transport.Transport
	// sink records the target's calls to its vendor (profile downstream:); nil without.
	sink downstream.Recorder
	// tls verifies an https:// target (the profile's tls.ca_file); nil: the system's roots.
	tls *tls.Config
	// hooks is what the preflight's proof saw of the profile's test hooks (hookproof.go);
	// nil: no proof was made, and the declarations are taken as written.
	hooks *HookProof
	// pace is how fast the target answered its preflight (zero: not measured).
	pace Pace
	// plan fits one scenario to the target (plan.go): set on the copy of the target a
	// scenario runs with; nil: as written.
	plan *plan
	// checkFault says whether the fault layer can apply a fault (nil: every fault of the
	// HTTP proxy): a stdio server's pipes cannot carry a status.
	checkFault func(faultproxy.FaultSpec) error
	// alone is held shared by every scenario, exclusively by one that switches the
	// target's store faults (switchesStore). A pointer: a scenario runs with a copy of
	// its target (its plan), which must share the one lock.
	alone *sync.RWMutex
}

// openTarget starts an in-process fault proxy in front of the profile's base URL, or
// connects to the running proxy the profile names.
func openTarget(ctx context.Context, p *profile.Profile, seed int64) (*target, error) {
	tc, err := p.TLSClientConfig()
	if err != nil {
		return nil, fmt.Errorf("open target %s: %w", p.Name, err)
	}
	t := &target{p: p, client: transport.NewAttemptClient(tc), probe: transport.NewProbeClient(10*time.Second, tc), classifier: p.Classifier(), tls: tc, alone: &sync.RWMutex{}}
	t.tr = p.NewTransport(t.classifier, t.probe, tc)
	if p.IsStdio() {
		return t, t.openStdio(seed)
	}
	if p.Proxy != nil {
		// The remote proxy must read the key where the profile puts it (its own
		// --key-header / --key-field); the runner cannot reconfigure it.
		t.proxyURL, t.ctl, t.closeFn = p.Proxy.URL, client.New(p.Proxy.Admin, p.Proxy.AdminToken), func() error { return nil }
		if err := t.openSink(); err != nil {
			return nil, err
		}
		return t, nil
	}
	// The journal names each answer's outcome class too, so the timeline and client-check
	// read the same classes the checkers judge. Its own classifier instance: the run's
	// rule-match counts (reported by the preflight) stay the runner's alone.
	journalClass := p.Classifier()
	srv, err := faultproxy.Start(ctx, faultproxy.Config{
		Upstream: p.BaseURL, KeyHeader: p.KeyHeader, KeyField: p.KeyField, Seed: seed, TLSClientConfig: tc,
		// A committed body is compared with what the client got, which is read up to
		// MaxResponseBody: the journal keeps as much, so a large one is compared whole.
		JournalBodyLimit: transport.MaxResponseBody,
		Classify: func(status int, h http.Header, body []byte) string {
			if decoded, err := contentcoding.Decode(h.Get("Content-Encoding"), body, transport.MaxResponseBody); err == nil {
				body = decoded
			}
			return string(journalClass.Classify(outcome.Answer{Status: status, Header: h, Body: body}))
		},
	})
	if err != nil {
		return nil, fmt.Errorf("open target %s: start proxy: %w", p.Name, err)
	}
	t.proxyURL, t.ctl, t.closeFn = srv.URL(), srv.Proxy(), srv.Close
	if err := t.openSink(); err != nil {
		t.closeFn()
		return nil, err
	}
	return t, nil
}

func (t *target) close() error { return t.closeFn() }

// openSink attaches the downstream sink the profile declares: the one its starter
// already runs, or a new one at downstream.listen (closed with the target).
func (t *target) openSink() error {
	d := t.p.Downstream
	if d == nil {
		return nil
	}
	if d.Sink != nil {
		t.sink = d.Sink
		return nil
	}
	if d.Admin != "" {
		t.sink = downstream.NewRemote(d.Admin)
		return nil
	}
	if _, port, _ := net.SplitHostPort(d.Listen); port == "0" {
		return fmt.Errorf("open target %s: downstream.listen %s picks a free port the target cannot know: give the fixed address the target calls as its vendor, e.g. 127.0.0.1:9090", t.p.Name, d.Listen)
	}
	s, err := downstream.Start(d.SinkConfig())
	if err != nil {
		return fmt.Errorf("open target %s: %w", t.p.Name, err)
	}
	t.sink = s
	closeProxy := t.closeFn
	t.closeFn = func() error { return errors.Join(closeProxy(), s.Close()) }
	return nil
}

// ledgerBase is where probes go: straight to the target when its URL is known (a probe
// must never meet a fault), else through the proxy, whose rules only match keyed requests.
func (t *target) ledgerBase() string {
	if t.p.BaseURL != "" {
		return t.p.BaseURL
	}
	return t.proxyURL
}

// journalFor collects the proxy's records of the given keys, in arrival order. It waits
// (bounded) until at least want records exist: the proxy journals an attempt when the
// attempt ends on its side, which for a held response is after the client gave up.
func (t *target) journalFor(ctx context.Context, keys []string, want int) ([]faultproxy.Record, error) {
	deadline := time.Now().Add(t.p.ClientTimeout.Std() + time.Second)
	for {
		all, err := t.journalOfKeys(ctx, keys)
		if err != nil {
			return nil, fmt.Errorf("read journal: %w", err)
		}
		all = dedupeRecords(all)
		if len(all) >= want || time.Now().After(deadline) {
			return all, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("read journal: %w", ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// dedupeRecords sorts by Seq and drops records found under two key spellings.
func dedupeRecords(all []faultproxy.Record) []faultproxy.Record {
	sort.Slice(all, func(i, j int) bool { return all[i].Seq < all[j].Seq })
	out := all[:0]
	for i, r := range all {
		if i == 0 || r.Seq != all[i-1].Seq {
			out = append(out, r)
		}
	}
	return out
}

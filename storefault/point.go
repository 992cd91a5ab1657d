package storefault

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/Shopify/toxiproxy/v2/toxics"
	"github.com/rs/zerolog"
)

// Fault is what the point does to the connections through it.
type Fault string

const (
	None    Fault = ""        // healthy: bytes pass unchanged
	Down    Fault = "down"    // existing connections cut, new ones closed at once
	Reset   Fault = "reset"   // every connection reset (RST) at its next byte
	Latency Fault = "latency" // bytes from the store delayed by Config.Latency
	Hang    Fault = "hang"    // bytes dropped both ways, connections kept open
)

// Faults lists the faults a point can apply, for error messages and docs.
var Faults = []Fault{Down, Reset, Latency, Hang}

// DefaultDialTimeout bounds Start's check that the upstream answers.
const DefaultDialTimeout = 3 * time.Second

// Config configures a point.
type Config struct {
	// Listen is where the API connects instead of its store: host:port (port 0 picks a
	// free one, for a caller that tells the API the address afterwards).
	Listen string
	// Upstream is the store's own address, host:port.
	Upstream string
	// DialTimeout bounds the check, at Start, that Upstream accepts a connection
	// (default DefaultDialTimeout).
	DialTimeout time.Duration
}

// Stats are a point's counters since it started.
type Stats struct {
	Connections int64 `json:"connections"` // connections the point accepted
	Refused     int64 `json:"refused"`     // of them, closed at once because the point was down
	Cut         int64 `json:"cut"`         // live connections the Down fault cut
	ToStore     int64 `json:"to_store"`    // bytes the API sent to the store
	FromStore   int64 `json:"from_store"`  // bytes the store sent to the API
}

// Sub is what happened between an earlier snapshot and s.
func (s Stats) Sub(earlier Stats) Stats {
	return Stats{
		Connections: s.Connections - earlier.Connections, Refused: s.Refused - earlier.Refused,
		Cut: s.Cut - earlier.Cut, ToStore: s.ToStore - earlier.ToStore, FromStore: s.FromStore - earlier.FromStore,
	}
}

// Touched reports whether the API reached for the store at all in the span: a
// connection accepted (or refused), a live one cut, or a byte sent.
func (s Stats) Touched() bool { return s.Connections > 0 || s.Cut > 0 || s.ToStore > 0 }

// Point is a running store fault point. Its methods are safe for concurrent use.
type Point struct {
	cfg   Config
	proxy *toxiproxy.Proxy
	stats counters

	// down and cut are read by the taps on every connection's goroutines, which must
	// never wait for mu: Set holds mu while Toxiproxy waits for those goroutines.
	down atomic.Bool
	cut  atomic.Pointer[chan struct{}] // closed (and replaced) when the point goes down

	mu      sync.Mutex // serialises Set and Close
	fault   Fault
	toxics  []string // names of the Toxiproxy toxics the current fault added
	latency time.Duration
	closed  bool
}

// Start checks that the upstream accepts a connection, then listens. An unreachable
// upstream is an error naming it, so a misconfigured store address is found before a
// run rather than read as an outage.
func Start(cfg Config) (*Point, error) {
	if err := checkAddr("listen", cfg.Listen); err != nil {
		return nil, err
	}
	if err := checkAddr("upstream", cfg.Upstream); err != nil {
		return nil, err
	}
	if err := CheckUpstream(context.Background(), cfg.Upstream, cfg.DialTimeout); err != nil {
		return nil, err
	}
	registerTap.Do(func() { toxics.Register(tapType, new(tap)) })
	server := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	p := &Point{cfg: cfg}
	first := make(chan struct{})
	p.cut.Store(&first)
	p.proxy = toxiproxy.NewProxy(server, "idemproof-store", cfg.Listen, cfg.Upstream)
	for _, upstream := range []bool{true, false} {
		stream := "downstream"
		if upstream {
			stream = "upstream"
		}
		w, err := p.proxy.Toxics.AddToxicJson(strings.NewReader(fmt.Sprintf(
			`{"name":"tap-%s","type":%q,"stream":%q,"toxicity":1,"attributes":{"upstream":%t}}`, stream, tapType, stream, upstream)))
		if err != nil {
			return nil, fmt.Errorf("store fault point: install tap: %w", err)
		}
		// Set before Start: no connection exists yet, so no link reads it unset.
		w.Toxic.(*tap).point = p
	}
	if err := p.proxy.Start(); err != nil {
		return nil, fmt.Errorf("store fault point: listen on %s: %w", cfg.Listen, err)
	}
	return p, nil
}

func checkAddr(field, addr string) error {
	if _, port, err := net.SplitHostPort(addr); err != nil || port == "" {
		return fmt.Errorf("store fault point: %s must be host:port, got %q", field, addr)
	}
	return nil
}

// CheckUpstream dials the store once (timeout 0: DefaultDialTimeout) and closes the
// connection: an error says the store at addr does not accept connections.
func CheckUpstream(ctx context.Context, addr string, timeout time.Duration) error {
	if timeout <= 0 {
		timeout = DefaultDialTimeout
	}
	d := net.Dialer{Timeout: timeout}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("store fault point: the store at upstream %s does not accept connections (%v): start it, or fix store.upstream", addr, err)
	}
	return c.Close()
}

// Addr is the address the point listens on (Listen with its port resolved).
func (p *Point) Addr() string { return p.proxy.Listen }

// Upstream is the store's address.
func (p *Point) Upstream() string { return p.cfg.Upstream }

// Stats returns the counters so far.
func (p *Point) Stats() Stats {
	return Stats{
		Connections: p.stats.connections.Load(), Refused: p.stats.refused.Load(), Cut: p.stats.cut.Load(),
		ToStore: p.stats.toStore.Load(), FromStore: p.stats.fromStore.Load(),
	}
}

// Fault is the fault in force (None when healthy).
func (p *Point) Fault() Fault {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fault
}

// Set applies f to every connection, replacing the fault in force; latency is the delay
// of the Latency fault (ignored by the others). Set(None, 0) heals.
func (p *Point) Set(f Fault, latency time.Duration) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return errors.New("store fault point: closed")
	}
	if err := p.clearLocked(); err != nil {
		return err
	}
	var specs []string
	switch f {
	case None:
		return nil
	case Down:
		p.down.Store(true)
		next := make(chan struct{})
		close(*p.cut.Swap(&next))
	case Reset:
		specs = bothStreams("reset", `"type":"reset_peer","attributes":{"timeout":0}`)
	case Latency:
		if latency <= 0 {
			return errors.New("store fault point: latency needs a positive delay")
		}
		specs = []string{fmt.Sprintf(`{"name":"fault-latency","type":"latency","stream":"downstream","toxicity":1,"attributes":{"latency":%d}}`, latency.Milliseconds())}
	case Hang:
		specs = bothStreams("hang", `"type":"timeout","attributes":{"timeout":0}`)
	default:
		return fmt.Errorf("store fault point: unknown fault %q (want one of %v)", f, Faults)
	}
	for _, spec := range specs {
		w, err := p.proxy.Toxics.AddToxicJson(strings.NewReader(spec))
		if err != nil {
			_ = p.clearLocked()
			return fmt.Errorf("store fault point: apply %s: %w", f, err)
		}
		p.toxics = append(p.toxics, w.Name)
	}
	p.fault, p.latency = f, latency
	return nil
}

// Heal clears the fault in force: the store is back.
func (p *Point) Heal() error { return p.Set(None, 0) }

func bothStreams(name, body string) []string {
	return []string{
		fmt.Sprintf(`{"name":"fault-%s-up","stream":"upstream","toxicity":1,%s}`, name, body),
		fmt.Sprintf(`{"name":"fault-%s-down","stream":"downstream","toxicity":1,%s}`, name, body),
	}
}

// clearLocked removes the fault in force; p.mu is held.
func (p *Point) clearLocked() error {
	var errs []error
	for _, name := range p.toxics {
		if err := p.proxy.Toxics.RemoveToxic(context.Background(), name); err != nil {
			errs = append(errs, fmt.Errorf("store fault point: remove %s: %w", name, err))
		}
	}
	p.toxics = nil
	p.down.Store(false)
	p.fault, p.latency = None, 0
	return errors.Join(errs...)
}

func (p *Point) isDown() bool { return p.down.Load() }

func (p *Point) cutSignal() <-chan struct{} { return *p.cut.Load() }

// Close stops listening and closes every connection through the point.
func (p *Point) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.mu.Unlock()
	p.proxy.Stop()
	return nil
}

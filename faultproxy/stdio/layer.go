package stdio

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/faultproxy/stdio/jsonl"
)

// Defaults applied by New to zero Config fields.
const (
	DefaultStopGrace        = 2 * time.Second
	DefaultJournalBodyLimit = 64 << 10
)

// Config configures a Layer. Zero values mean the documented default.
type Config struct {
	// Command starts the server, once per client connection. Required unless Serve is set.
	Command Command
	// Serve, when set, runs the server in-process instead (a fixture, a test): once per
	// connection, its state shared by them all and surviving a kill.
	Serve ServeFunc
	// KeyField is where a request carries its idempotency key: a dotted path into the
	// JSON-RPC request (params._meta.idempotency_key), as faultproxy.Config.KeyField;
	// "" reads no key.
	KeyField string
	// Seed seeds the one random source behind rule probabilities.
	Seed int64
	// Rules are added in order; a bad one (or one a pipe cannot express) makes New fail.
	Rules []faultproxy.Rule
	// Classify, when set, names the outcome class of the answer line each client got,
	// journaled as Record.Class ("info" when it got none). It must be safe for
	// concurrent use.
	Classify func(line []byte) string
	// JournalBodyLimit bounds the server's answer kept in a record when a rule acted on
	// the request (default 64 KiB).
	JournalBodyLimit int
	// MaxLine bounds one line from either side (default jsonl.DefaultMaxLine); a longer
	// one is not passed on, and the journal says so.
	MaxLine int
	// Stderr, when set, gets a copy of what every server writes to its stderr (the shim
	// passes it on to the agent host's log).
	Stderr io.Writer
	// StopGrace is how long a server gets to exit after its stdin closed, and again after
	// SIGTERM, before SIGKILL (default 2s).
	StopGrace time.Duration
	// Annotate, when set, gives each request a client sends without attributes of its own
	// (a connection made by Serve, Conn.Write) the attributes its rules match on
	// (Match.Headers) and its record keeps (Record.Headers). It runs before the rule is
	// chosen, one request at a time per connection.
	Annotate func(line []byte, m jsonl.Message) map[string]string
	// Answered, when set, is called when the server answered a request, before its fault
	// acts on the answer.
	Answered func(attrs map[string]string)
	// Delivered, when set, is told what the client got for each request: the line (nil
	// when none: dropped, killed, the server gone; a cut line as it was written) and when
	// its writing began.
	Delivered func(attrs map[string]string, line []byte, sent time.Time)
	// Journal bounds and the admin API's hosts, as faultproxy.Config's fields of the same
	// names.
	JournalCapacity int
	JournalBytes    int64
	AttemptKeyBytes int64
	AdminAddr       string
	AdminAllowHosts []string
}

// Layer puts faults between clients and a stdio server. Create it with New; it is safe
// for concurrent use.
type Layer struct {
	cfg     Config
	engine  *faultproxy.Engine
	keyPath string

	mu       sync.Mutex
	sessions map[*session]bool
	closed   bool
}

// New checks cfg and applies defaults; no server starts before a client connects.
func New(cfg Config) (*Layer, error) {
	if len(cfg.Command.Args) == 0 && cfg.Serve == nil {
		return nil, errors.New("new stdio layer: no server command")
	}
	if cfg.StopGrace <= 0 {
		cfg.StopGrace = DefaultStopGrace
	}
	if cfg.JournalBodyLimit == 0 {
		cfg.JournalBodyLimit = DefaultJournalBodyLimit
	}
	if cfg.MaxLine <= 0 {
		cfg.MaxLine = jsonl.DefaultMaxLine
	}
	e, err := faultproxy.NewEngine(faultproxy.EngineConfig{
		CheckFault: CheckFault, Seed: cfg.Seed, Rules: cfg.Rules,
		JournalCapacity: cfg.JournalCapacity, JournalBytes: cfg.JournalBytes, AttemptKeyBytes: cfg.AttemptKeyBytes,
		AdminAddr: cfg.AdminAddr, AdminAllowHosts: cfg.AdminAllowHosts,
	})
	if err != nil {
		return nil, fmt.Errorf("new stdio layer: %w", err)
	}
	return &Layer{cfg: cfg, engine: e, keyPath: faultproxy.KeyPath(cfg.KeyField), sessions: map[*session]bool{}}, nil
}

// Engine is the layer's rules and journal: a faultproxy.Controller, and the admin API
// (Engine().AdminHandler).
func (l *Layer) Engine() *faultproxy.Engine { return l.engine }

// Connect starts a server for a new in-process client and returns the client's end.
func (l *Layer) Connect() (*Conn, error) {
	cr, cw := io.Pipe() // what the layer writes for the client to read
	c := &Conn{r: cr, w: cw}
	s, err := l.open(cw, func() { cw.Close() })
	if err != nil {
		cr.Close()
		return nil, err
	}
	c.s = s
	return c, nil
}

// Serve accepts client connections on ln until it is closed (or the layer is): each gets
// a server of its own, its lines read from and written to the network connection. When
// the server exits the connection is closed; when the client half-closes or closes it,
// the server is stopped.
func (l *Layer) Serve(ln net.Listener) error {
	for {
		nc, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		s, err := l.open(nc, func() { nc.Close() })
		if err != nil {
			// The relay learns it from the connection closing; the journal from a record.
			l.engine.Log(&faultproxy.Record{Method: "stdio", ClientResult: faultproxy.ClientClosed, Note: err.Error()})
			nc.Close()
			continue
		}
		go func() {
			s.readClient(nc)
		}()
	}
}

// Run serves one client on in and out — a shim's own stdin and stdout, as an agent host
// starts it in its server's stead — until the client ends (in reaches its end: the
// server is stopped) or the server does (it exited, or a fault killed it). It returns how
// the server ended, and whether the client ended first. The goroutine reading in may
// outlive it, blocked on a read.
func (l *Layer) Run(in io.Reader, out io.Writer) (exit string, clientEnded bool, err error) {
	s, err := l.open(out, func() {})
	if err != nil {
		return "", false, err
	}
	go s.readClient(in)
	<-s.finished
	return s.exitNote(), s.clientEnded.Load(), nil
}

func (l *Layer) open(client io.Writer, closeClient func()) (*session, error) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil, errors.New("stdio layer closed")
	}
	l.mu.Unlock()
	var srv server
	if l.cfg.Serve != nil {
		srv = launch(l.cfg.Serve)
	} else {
		proc, err := Start(l.cfg.Command, l.cfg.Stderr)
		if err != nil {
			return nil, err
		}
		srv = proc
	}
	s := newSession(l, srv, client, closeClient)
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		s.stop()
		return nil, errors.New("stdio layer closed")
	}
	l.sessions[s] = true
	l.mu.Unlock()
	return s, nil
}

func (l *Layer) forget(s *session) {
	l.mu.Lock()
	delete(l.sessions, s)
	l.mu.Unlock()
}

// Close stops every server (as a client ending its connection would) and returns once
// they are all reaped. New connections are refused afterwards.
func (l *Layer) Close() error {
	l.mu.Lock()
	l.closed = true
	all := make([]*session, 0, len(l.sessions))
	for s := range l.sessions {
		all = append(all, s)
	}
	l.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range all {
		wg.Add(1)
		go func() { defer wg.Done(); s.stop() }()
	}
	wg.Wait()
	return nil
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

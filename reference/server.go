package reference

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/idemproof/idemproof/reference/idempotency"
	"github.com/idemproof/idemproof/reference/memstore"
	"github.com/idemproof/idemproof/reference/outbox"
)

// Server is the reference refund server; it is an http.Handler. Close stops its cleanup
// job (and closes the default memory store; a store passed with WithStore stays the
// caller's to close).
type Server struct {
	mux       *http.ServeMux
	store     idempotency.Store
	appStore  idempotency.Store // the ledger's and unkeyed work's (WithAppStore), else store
	ownsStore bool
	cfg       config
	stop      chan struct{}
	done      sync.WaitGroup
	closeOnce sync.Once
	outbox    *outbox.Worker // delivers vendor jobs (vendor.go); nil without a vendor
}

type config struct {
	store           idempotency.Store
	appStore        idempotency.Store // WithAppStore; nil: store
	storeTimeout    time.Duration
	retention       time.Duration
	lockTimeout     time.Duration
	now             func() time.Time
	testHooks       bool
	crashExits      bool
	flawNames       []string
	flaws           idempotency.Flaws
	tokens          map[string]bool
	keysOptional    bool
	cleanupInterval time.Duration
	bodyTimeout     time.Duration
	logger          *slog.Logger
	vendorURL       string // vendor.go
}

// Option configures New.
type Option func(*config) error

// WithStore sets the store (default: a fresh memory store).
func WithStore(s idempotency.Store) Option {
	return func(c *config) error {
		if s == nil {
			return errors.New("WithStore: store is nil")
		}
		c.store = s
		return nil
	}
}

// WithAppStore sets the application's own connection to the database, apart from the
// key store's (WithStore): the ledger reads and work done without a key go through it.
// By default they use the store. With both on one database, the key store can sit behind
// a store fault point (an outage of the keys' connection) while the ledger stays readable.
func WithAppStore(s idempotency.Store) Option {
	return func(c *config) error {
		if s == nil {
			return errors.New("WithAppStore: store is nil")
		}
		c.appStore = s
		return nil
	}
}

// WithStoreTimeout bounds how long a keyed request waits for the key store to record its
// key (the two-phase path): past it the request is refused with 503 (default: no bound
// beyond the store's own).
func WithStoreTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d < 0 {
			return errors.New("WithStoreTimeout: must not be negative")
		}
		c.storeTimeout = d
		return nil
	}
}

// WithRetention sets how long a key lives, counted from its first record (default 24h).
func WithRetention(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("retention %v: must be positive", d)
		}
		c.retention = d
		return nil
	}
}

// WithLockTimeout sets when a held key's lock goes stale and may be taken over
// (default 30s).
func WithLockTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("lock timeout %v: must be positive", d)
		}
		c.lockTimeout = d
		return nil
	}
}

// WithClock injects the clock that windows and locks are measured with (default
// time.Now). Test hook delays still use real time.
func WithClock(now func() time.Time) Option {
	return func(c *config) error {
		if now == nil {
			return errors.New("WithClock: clock is nil")
		}
		c.now = now
		return nil
	}
}

// WithTestHooks enables the X-Test-Delay, X-Test-Fail and X-Test-Crash request headers.
func WithTestHooks(on bool) Option {
	return func(c *config) error { c.testHooks = on; return nil }
}

// WithCrashExits makes X-Test-Crash exit the process (os.Exit(3), no deferred cleanup)
// instead of abandoning the request: for suites that run the server as a process.
func WithCrashExits(on bool) Option {
	return func(c *config) error { c.crashExits = on; return nil }
}

// WithFlaws switches on flaws by name (see Flaws); an unknown name is an error that
// lists the valid ones.
func WithFlaws(names ...string) Option {
	return func(c *config) error {
		c.flawNames = append(c.flawNames, names...)
		f, err := parseFlaws(c.flawNames)
		c.flaws = f
		return err
	}
}

// WithTokens accepts only these bearer tokens; each token is its own principal. Without
// tokens the server is in open mode (see the package doc).
func WithTokens(tokens ...string) Option {
	return func(c *config) error {
		for _, t := range tokens {
			if t == "" {
				return errors.New("WithTokens: a token is empty")
			}
			if t == Anonymous {
				return fmt.Errorf("WithTokens: %q is reserved for requests without credentials; choose another token", Anonymous)
			}
			if c.tokens == nil {
				c.tokens = map[string]bool{}
			}
			c.tokens[t] = true
		}
		return nil
	}
}

// WithKeysOptional lets a request without Idempotency-Key execute unkeyed instead of 400.
func WithKeysOptional(on bool) Option {
	return func(c *config) error { c.keysOptional = on; return nil }
}

// WithCleanupInterval sets how often expired keys are deleted (default: a quarter of
// the retention, between 100ms and 1m). Expired keys count as absent either way.
func WithCleanupInterval(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("cleanup interval %v: must be positive", d)
		}
		c.cleanupInterval = d
		return nil
	}
}

// WithBodyTimeout sets how long a client has to send a whole request body (default
// DefaultBodyTimeout; negative: no limit). Past it the request is answered 408 and
// nothing is recorded.
func WithBodyTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d == 0 {
			return errors.New("body timeout 0: give a positive duration, or a negative one for none")
		}
		c.bodyTimeout = d
		return nil
	}
}

// WithLogger sets the logger for store failures (default slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error { c.logger = l; return nil }
}

// New builds the server and starts its cleanup job.
func New(opts ...Option) (*Server, error) {
	cfg := config{
		retention:   idempotency.DefaultRetention,
		lockTimeout: idempotency.DefaultLockTimeout,
		now:         time.Now,
		bodyTimeout: DefaultBodyTimeout,
		logger:      slog.Default(),
	}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, fmt.Errorf("configure reference server: %w", err)
		}
	}
	s := &Server{cfg: cfg, store: cfg.store, stop: make(chan struct{})}
	if s.store == nil {
		s.store, s.ownsStore = memstore.New(), true
	}
	s.appStore = cfg.appStore
	if s.appStore == nil {
		s.appStore = s.store
	}
	if s.cfg.cleanupInterval == 0 {
		s.cfg.cleanupInterval = min(max(cfg.retention/4, 100*time.Millisecond), time.Minute)
	}
	if err := s.routes(); err != nil {
		return nil, err
	}
	if err := s.startVendor(); err != nil {
		return nil, err
	}
	s.done.Add(1)
	go s.cleanup()
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	limitBodyTime(w, r, s.cfg.bodyTimeout)
	s.mux.ServeHTTP(w, r)
}

// Store returns the server's store (for probes in tests).
func (s *Server) Store() idempotency.Store { return s.store }

// Close stops the cleanup job; it is safe to call more than once.
func (s *Server) Close() error {
	var err error
	s.closeOnce.Do(func() {
		close(s.stop)
		s.done.Wait()
		if s.outbox != nil {
			s.outbox.Close()
		}
		if s.ownsStore {
			err = s.store.Close()
		}
	})
	return err
}

func (s *Server) routes() error {
	s.mux = http.NewServeMux()
	for _, op := range []operation{refundOperation, invoiceOperation} {
		cfg := idempotency.Config{
			Store:        s.store,
			Now:          s.cfg.now,
			Retention:    s.cfg.retention,
			LockTimeout:  s.cfg.lockTimeout,
			KeysOptional: s.cfg.keysOptional,
			Principal:    principalOf,
			Flaws:        s.cfg.flaws,
			Logger:       s.cfg.logger,
			StoreTimeout: s.cfg.storeTimeout,
			UnkeyedStore: s.appStore,
			// A refund and an invoice are rows in the store's database and nothing else:
			// on PostgreSQL the whole request is one transaction.
			OneTransaction: true,
		}
		local := idempotency.OneTransactionApplies(cfg)
		if s.cfg.testHooks {
			// Only then: on the one-transaction path AfterKey costs round trips.
			cfg.Hooks = idempotency.Hooks{AfterKey: s.afterKey(local), AfterCommit: s.crashAt(crashAfterCommit)}
		}
		keyed, err := idempotency.New(cfg, s.create(op, local))
		if err != nil {
			return fmt.Errorf("build %s endpoint: %w", op.kind, err)
		}
		s.mux.Handle("POST "+op.path, s.authenticate(s.parseHooks(s.wrapVendor(op, s.wrapFlaws(keyed)))))
		s.mux.HandleFunc("GET "+op.path, s.ledger(op))
		s.mux.Handle("GET "+op.path+"/{id}", s.authenticate(s.fetch(op)))
	}
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	return nil
}

// cleanup deletes expired keys periodically; correctness never depends on it, because
// an expired key counts as absent already.
func (s *Server) cleanup() {
	defer s.done.Done()
	t := time.NewTicker(s.cfg.cleanupInterval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if _, err := s.store.DeleteExpired(ctx, s.cfg.now()); err != nil {
				s.cfg.logger.Warn("reference: delete expired keys", "err", err)
			}
			cancel()
		}
	}
}

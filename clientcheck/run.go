package clientcheck

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/reference"
	"github.com/idemproof/idemproof/scenarios"
)

// Environment variables client-check exports to the code under test.
const (
	EnvBaseURL     = "IDEMPROOF_BASE_URL"     // the proxy: send POST /v1/refunds here
	EnvAdminURL    = "IDEMPROOF_ADMIN_URL"    // the proxy's admin API (rules, journal)
	EnvOutcomeFile = "IDEMPROOF_OUTCOME_FILE" // where the client may write its outcomes
	EnvKeyHeader   = "IDEMPROOF_KEY_HEADER"   // the idempotency key header name
)

// DefaultTimeout bounds the code under test.
const DefaultTimeout = 2 * time.Minute

// Env is what the code under test gets: where to send its requests and where to report.
type Env struct {
	BaseURL     string // the fault proxy in front of the reference server
	AdminURL    string // the proxy's admin API
	OutcomeFile string // JSON Lines, see Outcome; writing it is optional
	KeyHeader   string // "Idempotency-Key"
}

// Vars returns the environment as NAME=value pairs for a child process.
func (e Env) Vars() []string {
	return []string{
		EnvBaseURL + "=" + e.BaseURL,
		EnvAdminURL + "=" + e.AdminURL,
		EnvOutcomeFile + "=" + e.OutcomeFile,
		EnvKeyHeader + "=" + e.KeyHeader,
	}
}

// ClientFunc is the code under test: it performs its logical operations (refunds, one
// order_id each) against env.BaseURL and returns when done. A non-nil error is reported
// as the client/command-exit finding.
type ClientFunc func(ctx context.Context, env Env) error

// Config configures Run. The zero value runs the default fault schedule with seed 0.
type Config struct {
	// Faults are the proxy rules. nil means FaultSpec; an empty non-nil slice means no
	// faults.
	Faults []faultproxy.Rule
	// FaultSpec is parsed with ParseFaults when Faults is nil ("" = DefaultFaultSpec).
	FaultSpec string
	// Seed seeds the proxy's rule probabilities: the same seed and the same order of
	// requests give the same faults.
	Seed int64
	// Timeout bounds the code under test (default DefaultTimeout).
	Timeout time.Duration
	// MinBackoff is the least wait expected after a 409 without Retry-After (default
	// DefaultMinBackoff).
	MinBackoff time.Duration
	// OutcomeFile is where the client may write its outcomes; "" means a fresh file in a
	// temporary folder. An existing file is removed first so stale lines never count.
	OutcomeFile string
	// Reference adds options to the reference server (memory store, test hooks on).
	Reference []reference.Option
}

// Result is one run: the report (one result per check) and what it was computed from.
type Result struct {
	Report      scenarios.Report
	Observation Observation
	Env         Env
}

// Findings returns the results that fail the run (FAIL and UNKNOWN).
func (r *Result) Findings() []scenarios.Result { return Findings(r.Report.Results, false) }

// Err joins every finding into one error (nil when the client passed), so a plain Go
// test can write `if err := res.Err(); err != nil { t.Fatal(err) }`.
func (r *Result) Err() error {
	var errs []error
	for _, f := range r.Findings() {
		errs = append(errs, fmt.Errorf("%s %s: %s", f.Verdict, f.ScenarioID, f.Message))
	}
	return errors.Join(errs...)
}

// Run starts the reference server and the fault proxy on 127.0.0.1:0, runs client
// against them, then checks what happened. An error means the harness itself could not
// run (bad config, a port, the proxy); the client's own failure is a finding instead.
func Run(ctx context.Context, cfg Config, client ClientFunc) (*Result, error) {
	started := time.Now()
	rules := cfg.Faults
	if rules == nil {
		var err error
		if rules, err = ParseFaults(cfg.FaultSpec); err != nil {
			return nil, err
		}
	}
	outcomeFile, cleanup, err := prepareOutcomeFile(cfg.OutcomeFile)
	if err != nil {
		return nil, err
	}
	defer cleanup()

	ref, err := reference.New(append([]reference.Option{reference.WithTestHooks(true)}, cfg.Reference...)...)
	if err != nil {
		return nil, fmt.Errorf("start reference: %w", err)
	}
	defer ref.Close()
	obs := newObserver(ref, faultproxy.DefaultKeyHeader)
	upstream, err := serve(obs)
	if err != nil {
		return nil, err
	}
	defer upstream.Close()

	proxy, err := faultproxy.New(faultproxy.Config{
		Upstream: "http://" + upstream.Addr,
		Seed:     cfg.Seed,
		Rules:    rules,
	})
	if err != nil {
		return nil, fmt.Errorf("start proxy: %w", err)
	}
	defer proxy.CloseIdleConnections()
	front, err := serve(proxy)
	if err != nil {
		return nil, err
	}
	defer front.Close()
	admin, err := serve(proxy.AdminHandler(""))
	if err != nil {
		return nil, err
	}
	defer admin.Close()

	env := Env{BaseURL: "http://" + front.Addr, AdminURL: "http://" + admin.Addr, OutcomeFile: outcomeFile, KeyHeader: faultproxy.DefaultKeyHeader}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	clientErr := client(runCtx, env)
	if clientErr == nil && runCtx.Err() != nil {
		clientErr = fmt.Errorf("timed out after %s", timeout)
	}
	cancel()
	// The proxy journals an attempt after answering it: wait for the attempts still in
	// flight so the last one is counted.
	front.Close()

	o, err := observe(ctx, proxy, obs, rules)
	if err != nil {
		return nil, err
	}
	o.MinBackoff = cfg.MinBackoff
	if clientErr != nil {
		o.ExitErr = clientErr.Error()
	}
	outcomes, written, err := ReadOutcomeFile(outcomeFile)
	o.Outcomes, o.OutcomesWritten = outcomes, written
	if err != nil {
		o.OutcomeErr = err.Error()
	}
	if ledger, err := readLedger(ref, analyse(&o).allOperations()); err != nil {
		o.LedgerErr = err.Error()
	} else {
		o.Ledger = ledger
	}
	return &Result{Report: NewReport(o, cfg.Seed, started), Observation: o, Env: env}, nil
}

// NewReport wraps the checks of o, then one INFO result per operation (Operations), into
// a report the scenarios/report renderers accept.
func NewReport(o Observation, seed int64, started time.Time) scenarios.Report {
	return scenarios.Report{
		SchemaVersion: scenarios.ReportSchemaVersion,
		Tool:          "idemproof client-check",
		Seed:          seed,
		Started:       started.UTC(),
		DurationMS:    float64(time.Since(started)) / float64(time.Millisecond),
		Targets:       []string{Target},
		Results:       append(Check(o), Operations(o)...),
	}
}

// observe reads the journal of the keyed operation and what the observer learned.
func observe(ctx context.Context, proxy faultproxy.Controller, obs *observer, rules []faultproxy.Rule) (Observation, error) {
	journal, err := proxy.Journal(ctx, faultproxy.JournalQuery{})
	if err != nil {
		return Observation{}, fmt.Errorf("read journal: %w", err)
	}
	var attempts []faultproxy.Record
	for _, r := range journal {
		path, _, _ := strings.Cut(r.Path, "?")
		if strings.EqualFold(r.Method, OperationMethod) && path == OperationPath {
			attempts = append(attempts, r)
		}
	}
	entities, retryAfterByKey := obs.snapshot()
	byRule := retryAfterOf(rules)
	retryAfter := map[uint64]time.Duration{}
	for _, r := range attempts {
		if r.ClientStatus != http.StatusConflict {
			continue
		}
		if d, ok := byRule[r.Rule]; ok && r.Rule != "" {
			retryAfter[r.Seq] = d
		} else if d, ok := retryAfterByKey[r.Key]; ok && r.ReachedUpstream {
			retryAfter[r.Seq] = d
		}
	}
	return Observation{Attempts: attempts, Entities: entities, RetryAfter: retryAfter}, nil
}

// prepareOutcomeFile returns the outcome file path, removing a stale file, or a path in
// a fresh temporary folder that cleanup removes.
func prepareOutcomeFile(path string) (string, func(), error) {
	if path != "" {
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			return "", nil, fmt.Errorf("remove stale outcome file: %w", err)
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			return "", nil, fmt.Errorf("outcome file path: %w", err)
		}
		return abs, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "idemproof-client-check-")
	if err != nil {
		return "", nil, fmt.Errorf("create outcome folder: %w", err)
	}
	return filepath.Join(dir, "outcomes.jsonl"), func() { os.RemoveAll(dir) }, nil
}

// server is an http.Server on 127.0.0.1:0 that can wait for the handlers still running,
// hijacked connections (resets) included, which http.Server.Shutdown does not track.
type server struct {
	Addr     string
	srv      *http.Server
	inFlight sync.WaitGroup
	once     sync.Once
}

// drainTimeout bounds the wait for handlers at Close; a held response ends as soon as its
// client has gone, so this is only a backstop.
const drainTimeout = 10 * time.Second

func serve(h http.Handler) (*server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen on 127.0.0.1: %w", err)
	}
	s := &server{Addr: ln.Addr().String()}
	s.srv = &http.Server{
		ReadHeaderTimeout: 10 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s.inFlight.Add(1)
			defer s.inFlight.Done()
			h.ServeHTTP(w, r)
		}),
	}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Close stops accepting, waits (bounded) for running handlers, then closes every
// connection. Safe to call more than once.
func (s *server) Close() {
	s.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), drainTimeout)
		defer cancel()
		_ = s.srv.Shutdown(ctx)
		done := make(chan struct{})
		go func() { s.inFlight.Wait(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
		}
		s.srv.Close()
	})
}

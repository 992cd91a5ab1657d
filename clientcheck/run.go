package clientcheck

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"

	clientoutcome "github.com/idemproof/idemproof/clientcheck/outcome"
	"github.com/idemproof/idemproof/downstream"
	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/faultproxy/stdio"
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/reference"
	"github.com/idemproof/idemproof/reference/idempotency"
	"github.com/idemproof/idemproof/transport"
	"github.com/idemproof/idemproof/transport/contentcoding"
	"github.com/idemproof/idemproof/verdict"
)

// Environment variables client-check exports to the code under test.
const (
	EnvBaseURL         = "IDEMPROOF_BASE_URL"         // the proxy: send the operation here
	EnvAdminURL        = "IDEMPROOF_ADMIN_URL"        // the proxy's admin API (rules, journal)
	EnvOutcomeFile     = clientoutcome.EnvFile        // where the client may write its outcomes
	EnvKeyHeader       = "IDEMPROOF_KEY_HEADER"       // the idempotency key header name (when the key travels in a header)
	EnvKeyField        = "IDEMPROOF_KEY_FIELD"        // the key's JSON path in the body (when it travels there)
	EnvOperationMethod = "IDEMPROOF_OPERATION_METHOD" // the operation's method, e.g. POST
	EnvOperationURL    = "IDEMPROOF_OPERATION_URL"    // base URL + operation path (a path template keeps its {{.Entity}})
	EnvOperationBody   = "IDEMPROOF_OPERATION_BODY"   // the profile's body template, with {{.Entity}}
	EnvEntity          = "IDEMPROOF_ENTITY"           // where a request names its operation: json:PATH, form:FIELD, header:NAME or path:TEMPLATE
	EnvMCPEndpoint     = "IDEMPROOF_MCP_ENDPOINT"     // the operation URL, when the operation is a JSON-RPC (MCP) call
	EnvMCPCommand      = "IDEMPROOF_MCP_COMMAND"      // over stdio: the server command to start, a JSON array (argv): the shim in front of the server
	EnvMCPTool         = "IDEMPROOF_MCP_TOOL"         // the keyed tool, when the operation is an MCP tool call
	// EnvStateDir (restart.go): a folder that survives the client's restarts.
	// EnvTempDir is the standard variable that mktemp, Go's os.TempDir, Python's tempfile
	// and Node's os.tmpdir read: the code under test gets a temporary folder of its own.
	EnvTempDir = "TMPDIR"
)

// DefaultTimeout bounds the code under test.
const DefaultTimeout = 2 * time.Minute

// Env is what the code under test gets: where to send its requests and where to report.
type Env struct {
	BaseURL     string // the fault proxy in front of the target
	AdminURL    string // the proxy's admin API
	OutcomeFile string // JSON Lines, see Outcome; writing it is optional
	KeyHeader   string // "Idempotency-Key"; "" when the key travels in the body
	KeyField    string // the key's JSON path in the body; "" when it travels in a header
	// The operation, from the profile: its method, its URL through the proxy and its
	// body template ({{.Entity}} stands for the operation's entity).
	OperationMethod string
	OperationURL    string
	OperationBody   string
	// Entity is where a request names its operation: "json:order_id", "header:X-Order-Id".
	Entity string
	// MCPEndpoint is OperationURL when the operation is a JSON-RPC call (an MCP tool
	// call); "" otherwise.
	MCPEndpoint string
	// MCPCommand, over stdio, is the command the client starts as its MCP server (the
	// argv of the shim that stands for it: `idemproof proxy --stdio --attach ADDR`); the
	// environment carries it as a JSON array.
	MCPCommand []string
	// MCPTool is the keyed tool's name, when the operation is an MCP tool call.
	MCPTool string
	// StateDir is a folder the client may keep its pending operations in: it survives
	// the client's restarts within one run (see Restart).
	StateDir string
	// TempDir is the client's folder for temporary files, exported as TMPDIR. The run
	// removes it at its end with whatever is in it: a client killed at a restart or at
	// the timeout (SIGKILL, which no exit handler sees) leaves nothing behind.
	TempDir string
}

// Vars returns the environment as NAME=value pairs for a child process; a variable
// that does not apply (the key header of a body key, the MCP endpoint of a plain HTTP
// operation) is left out.
func (e Env) Vars() []string {
	var vars []string
	for _, v := range [][2]string{
		{EnvBaseURL, e.BaseURL},
		{EnvAdminURL, e.AdminURL},
		{EnvOutcomeFile, e.OutcomeFile},
		{EnvKeyHeader, e.KeyHeader},
		{EnvKeyField, e.KeyField},
		{EnvOperationMethod, e.OperationMethod},
		{EnvOperationURL, e.OperationURL},
		{EnvOperationBody, e.OperationBody},
		{EnvEntity, e.Entity},
		{EnvMCPEndpoint, e.MCPEndpoint},
		{EnvMCPCommand, jsonArgv(e.MCPCommand)},
		{EnvMCPTool, e.MCPTool},
		{EnvStateDir, e.StateDir},
		{EnvTempDir, e.TempDir},
	} {
		if v[1] != "" {
			vars = append(vars, v[0]+"="+v[1])
		}
	}
	return vars
}

// ClientFunc is the code under test: it performs its logical operations against
// env.BaseURL and returns when done. A non-nil error is reported as the
// client/command-exit finding.
type ClientFunc func(ctx context.Context, env Env) error

// Client is what Run accepts as the code under test: a ClientFunc, or just a function of
// the proxy's base URL.
type Client interface {
	ClientFunc | func(ctx context.Context, env Env) error | func(baseURL string) error
}

// Config configures Run. The zero value runs the embedded reference server under the
// default fault schedule with seed 0.
type Config struct {
	// Profile is the target the client calls: its base_url, where the key travels, the
	// operation, its entity (see profile.EntityRef; inferred from operation.body when
	// the profile declares none), its ledger and its outcome classes. nil means the
	// embedded reference refund server.
	Profile *profile.Profile
	// Faults are proxy rules used as given. nil means FaultSpec; an empty non-nil slice
	// means no faults.
	Faults []faultproxy.Rule
	// FaultSpec is parsed with ParseSchedule when Faults is nil ("" = DefaultFaultSpec).
	FaultSpec string
	// Seed deals the fault kinds over the operations and seeds the proxy's rule
	// probabilities: the same seed and the same order of requests give the same faults.
	Seed int64
	// Timeout bounds the code under test (default DefaultTimeout).
	Timeout time.Duration
	// MinBackoff is the least wait expected after an in-flight answer without
	// Retry-After (default DefaultMinBackoff).
	MinBackoff time.Duration
	// ClientPatience, when set, replaces the profile's client_patience: how long the
	// client may wait for one answer (the hold kind holds this long).
	ClientPatience time.Duration
	// RetryAfterCap, when set, replaces the profile's retry_after_cap, as declared: a
	// client may cap a retry hint at it, and must not wait longer.
	RetryAfterCap time.Duration
	// OutcomeFile is where the client may write its outcomes; "" means a fresh file in a
	// temporary folder. An existing file is removed first so stale lines never count.
	OutcomeFile string
	// Reference adds options to the embedded reference server (memory store, test hooks
	// on); unused with a Profile.
	Reference []reference.Option
	// Restart kills the code under test right after every attempt whose response the
	// proxy loses after the commit (hold, reset, close, 5xx kinds), at most once per
	// operation, and starts it again with the same Env. The restart fault kind does it
	// for the operations dealt it only.
	Restart bool
	// StateDir is the client's state folder (Env.StateDir); "" means a fresh temporary
	// folder, removed after the run.
	StateDir string
	// MCP, with no Profile, runs the code under test against the MCP fixture (package
	// reference/mcpserver, its keyed refund tool) instead of the HTTP reference: "http"
	// over Streamable HTTP (Env.MCPEndpoint), "stdio" over stdio (Env.MCPCommand).
	MCP string
	// ShimCommand is how the code under test starts the stdio shim that relays to the
	// run's fault layer: the argv of `idemproof proxy --stdio`, to which "--attach ADDR"
	// is added. nil: the idemproof program on the PATH (or this program, when it is
	// idemproof).
	ShimCommand []string
}

// Result is one run: the report (one result per check, the schedule, one per
// operation) and what it was computed from.
type Result struct {
	Report      verdict.Report
	Observation Observation
	Env         Env
}

// Findings returns the results that fail the run (FAIL and UNKNOWN).
func (r *Result) Findings() []verdict.Result { return Findings(r.Report.Results, false) }

// Err joins every finding into one error (nil when the client passed), so a plain Go
// test can write `if err := res.Err(); err != nil { t.Fatal(err) }`.
func (r *Result) Err() error {
	var errs []error
	for _, f := range r.Findings() {
		errs = append(errs, fmt.Errorf("%s %s: %s", f.Verdict, f.ScenarioID, f.Message))
	}
	return errors.Join(errs...)
}

// Attempts is the per-attempt view of one operation.
func (r *Result) Attempts(op string) []Attempt { return AttemptsOf(r.Observation, op) }

// Run puts the fault proxy in front of the target (the profile's, or the embedded
// reference server), runs client against it, then checks what happened. An error means
// the harness itself could not run (a bad profile or schedule, a fault that could never
// fire, a target that does not answer its ledger); the client's own failure is a
// finding instead.
func Run[C Client](ctx context.Context, cfg Config, client C) (*Result, error) {
	return run(ctx, cfg, asClientFunc(client))
}

func asClientFunc[C Client](client C) ClientFunc {
	switch c := any(client).(type) {
	case ClientFunc:
		return c
	case func(context.Context, Env) error:
		return c
	case func(string) error:
		if c == nil {
			return nil
		}
		return func(_ context.Context, env Env) error { return c(env.BaseURL) }
	}
	return nil
}

func run(ctx context.Context, cfg Config, client ClientFunc) (*Result, error) {
	started := time.Now()
	sched := &Schedule{Rules: cfg.Faults}
	if cfg.Faults == nil {
		spec := cfg.FaultSpec
		if strings.TrimSpace(spec) == "" && (cfg.MCP == "stdio" || (cfg.Profile != nil && cfg.Profile.IsStdio())) {
			spec = DefaultStdioFaultSpec // a pipe carries no 503
		}
		var err error
		if sched, err = ParseSchedule(spec); err != nil {
			return nil, err
		}
	} else {
		sched.Spec = fmt.Sprintf("%d rule(s) as given", len(cfg.Faults))
		if len(cfg.Faults) == 0 {
			sched.Spec = "none"
		}
	}

	if client == nil {
		return nil, errors.New("no client: give the code under test")
	}
	p, fixture, closeTarget, err := openTarget(cfg)
	if err != nil {
		return nil, err
	}
	defer closeTarget()
	sink, closeSink, err := openSink(p)
	if err != nil {
		return nil, err
	}
	defer closeSink()
	entity, err := EntityOf(p)
	if err != nil {
		return nil, err
	}
	times := timingOf(cfg, p)
	rules, err := sched.rulesFor(p, times)
	if err != nil {
		return nil, err
	}
	tc, err := p.TLSClientConfig()
	if err != nil {
		return nil, fmt.Errorf("profile %s: %w", p.Name, err)
	}
	ledger := ledgerReader{p.NewLedgerReader(transport.NewProbeClient(10*time.Second, tc))}
	if p.IsStdio() {
		// Over stdio the ledger is read through the run's fault layer, which starts the
		// server: the surface reads it first.
	} else if _, err := ledger.count(ctx, "idemproof-preflight-"+strconv.FormatInt(started.UnixNano(), 36)); err != nil {
		var answered *transport.LedgerStatusError
		if errors.As(err, &answered) {
			return nil, fmt.Errorf("preflight: the target %s refused the ledger read (side_effects; a fresh entity must count 0): %w", p.BaseURL, err)
		}
		return nil, fmt.Errorf("preflight: the target %s does not answer its ledger (is it running?): %w", p.BaseURL, err)
	}

	outcomeFile, cleanup, err := prepareOutcomeFile(cfg.OutcomeFile)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	stateDir, cleanupState, err := prepareStateDir(cfg.StateDir)
	if err != nil {
		return nil, err
	}
	defer cleanupState()
	tempDir, err := os.MkdirTemp("", "idemproof-client-tmp-")
	if err != nil {
		return nil, fmt.Errorf("create the client's temporary folder: %w", err)
	}
	defer os.RemoveAll(tempDir)

	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	restarts := newRestarter(cfg.Restart)
	deal := newDealer(sched.Kinds, cfg.Seed)
	fr := newFront(nil, p, entity, deal)
	fr.baseline = newBaselines(ledger)
	fr.restarter = restarts
	var sf *surface
	if p.IsStdio() {
		sf, err = openStdioSurface(ctx, cfg, p, fixture, fr, rules, restarts, runCtx)
	} else {
		sf, err = openHTTPSurface(p, tc, fr, rules, cfg.Seed, restarts, runCtx)
	}
	if err != nil {
		return nil, err
	}
	defer sf.close()
	if sf.ledger != nil {
		ledger = *sf.ledger
		fr.baseline = newBaselines(ledger)
	}

	env := newEnv(p, entity, sf.base, sf.admin, outcomeFile)
	env.MCPCommand = sf.command
	env.StateDir, env.TempDir = stateDir, tempDir
	clientStart := time.Now()
	clientErr := restarts.run(runCtx, client, env)
	timedOut := errors.Is(runCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
	if timedOut {
		clientErr = fmt.Errorf("timed out after %s", timeout)
	}
	clientDuration := time.Since(clientStart)
	cancel()
	// The proxy journals an attempt after answering it: wait for the attempts still in
	// flight so the last one is counted.
	sf.drain()

	o, err := observe(ctx, sf.ctl, fr, p)
	if err != nil {
		return nil, err
	}
	o.EntityRef = entity.String()
	o.MinBackoff, o.ClientDuration = cfg.MinBackoff, clientDuration
	o.Patience, o.Retention = times.patience, times.retention
	o.RetryAfterCap, o.RetryAfterCapDeclared = p.RetryAfterCap.Std(), p.RetryAfterCap > 0
	if cfg.RetryAfterCap > 0 {
		o.RetryAfterCap, o.RetryAfterCapDeclared = cfg.RetryAfterCap, true
	}
	o.KeyOptional = p.Expect.MissingKey == "optional"
	o.KeyIgnored = !p.Expect.KeyHonoured()
	o.Schedule = AppliedSchedule{Spec: sched.String(), Seed: cfg.Seed, Assignments: deal.assignments()}
	for _, k := range sched.Kinds {
		if k.Name == "hold" {
			hold, why := times.holdFor(k)
			o.Schedule.HoldMS, o.Schedule.HoldNote = millis(hold), why
		}
	}
	o.Restarts = restarts.all()
	for _, k := range sched.Kinds {
		switch {
		case sched.Rules != nil, cfg.Profile == nil: // given rules; the reference, whose own bodies these are
		case k.Name == "409" && jsonRPCRefusalOK(p, outcome.InFlight), k.Name == "422" && jsonRPCRefusalOK(p, outcome.Mismatch):
			// the API's JSON-RPC error, built from the profile's own rule for it
		case k.Name == "409" && p.Expect.InFlightBody == "":
			o.Schedule.StandIns = append(o.Schedule.StandIns, "expect.in_flight_body")
		case k.Name == "422" && p.Expect.MismatchBody == "":
			o.Schedule.StandIns = append(o.Schedule.StandIns, "expect.mismatch_body")
		}
	}
	o.Schedule.Restart = cfg.Restart || slices.ContainsFunc(sched.Kinds, func(k FaultKind) bool { return k.Name == "restart" })
	for _, k := range sched.Kinds {
		o.Schedule.Kinds = append(o.Schedule.Kinds, k.Name)
	}
	for _, r := range sched.Rules {
		o.Schedule.Rules = append(o.Schedule.Rules, r.Name)
	}
	if clientErr != nil {
		o.ExitErr = clientErr.Error()
	}
	o.TimedOut = timedOut
	outcomes, written, err := ReadOutcomeFile(outcomeFile)
	o.Outcomes, o.OutcomesWritten = outcomes, written
	if err != nil {
		o.OutcomeErr = err.Error()
	}
	var entities []string
	for _, op := range analyse(&o).allOperations() {
		if !strings.HasPrefix(op, "body:") {
			entities = append(entities, op)
		}
	}
	if counts, err := ledger.readLedger(ctx, entities); err != nil {
		o.LedgerErr = err.Error()
	} else if o.Ledger, o.LedgerBefore, err = sinceBaseline(counts, fr.baseline); err != nil {
		o.LedgerErr = err.Error()
	}
	if sink != nil && o.LedgerErr == "" {
		if o.Vendor, o.VendorCalls, err = settleVendor(ctx, sink, p, o.Ledger); err != nil {
			o.Vendor, o.VendorErr = map[string]downstream.Ledger{}, err.Error()
		}
	}
	return &Result{Report: NewReport(o, cfg.Seed, started), Observation: o, Env: env}, nil
}

// timingOf is the run's timing: client_patience (Config over profile over default) and
// the declared retention.
func timingOf(cfg Config, p *profile.Profile) timing {
	t := timing{patience: cfg.ClientPatience, retention: p.Retention.Std()}
	if t.patience <= 0 {
		t.patience = p.ClientPatience.Std()
	}
	if t.patience <= 0 {
		t.patience = profile.DefaultClientPatience.Std()
	}
	return t
}

// sinceBaseline is each entity's side effects during this run (its count now less its
// count before its first attempt), and those counts before.
func sinceBaseline(counts map[string]int, b *baselines) (since, before map[string]int, err error) {
	since, before = make(map[string]int, len(counts)), make(map[string]int, len(counts))
	for e, n := range counts {
		was, err := b.of(e)
		if err != nil {
			return nil, nil, fmt.Errorf("read the ledger of %s before its first attempt: %w", e, err)
		}
		if n < was {
			return nil, nil, fmt.Errorf("the ledger of %s shrank during the run (%d before, %d after): its effects cannot be counted", e, was, n)
		}
		since[e], before[e] = n-was, was
	}
	return since, before, nil
}

// openTarget returns the profile to run against: cfg.Profile, or the embedded reference
// server's own profile pointed at a fresh in-process instance (or, with cfg.MCP, the
// MCP fixture's: fixture is then the in-process stdio server, nil over HTTP).
func openTarget(cfg Config) (p *profile.Profile, fixture stdio.ServeFunc, closeTarget func(), err error) {
	if cfg.Profile != nil {
		if err := cfg.Profile.Validate(); err != nil {
			return nil, nil, nil, fmt.Errorf("profile %s: %w", cfg.Profile.Name, err)
		}
		if cfg.MCP != "" {
			return nil, nil, nil, fmt.Errorf("profile %s: the MCP fixture (Config.MCP, --mcp) is the target when there is no profile; give one or the other", cfg.Profile.Name)
		}
		if cfg.Profile.IsStdio() && !cfg.Profile.DurableKeys() {
			return nil, nil, nil, fmt.Errorf("profile %s: client-check reads a stdio server's ledger in a server process of its own, beside the one the client started, and the server may be killed and started again: its state must outlive a process. Declare expect.durable_keys: true for a server that keeps its keys and effects in a file or a database (or run the client against the MCP fixture: --mcp stdio)", cfg.Profile.Name)
		}
		if cfg.Profile.BaseURL == "" && !cfg.Profile.IsStdio() {
			return nil, nil, nil, fmt.Errorf("profile %s: base_url is required: client-check puts its own proxy in front of the target", cfg.Profile.Name)
		}
		return cfg.Profile, nil, func() {}, nil
	}
	if cfg.MCP != "" {
		return openMCPFixture(cfg)
	}
	sink, err := downstream.Start(downstream.Config{Listen: "127.0.0.1:0", EntityField: "order_id"})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("start vendor sink: %w", err)
	}
	opts := []reference.Option{reference.WithTestHooks(true), reference.WithVendorURL(sink.URL())}
	ref, err := reference.New(append(opts, cfg.Reference...)...)
	if err != nil {
		sink.Close()
		return nil, nil, nil, fmt.Errorf("start reference: %w", err)
	}
	srv, err := serve(ref)
	if err != nil {
		ref.Close()
		sink.Close()
		return nil, nil, nil, err
	}
	p, err = profile.Builtin("reference")
	if err != nil {
		srv.Close()
		ref.Close()
		sink.Close()
		return nil, nil, nil, err
	}
	p.BaseURL = "http://" + srv.Addr
	p.Entity = &profile.EntityRef{JSON: "order_id"}
	// The embedded server keeps its keys for its default retention, not the short one
	// the reference's profile declares for the catalogue's expiry scenarios.
	p.Retention = profile.Duration(idempotency.DefaultRetention)
	p.Downstream = &profile.Downstream{Listen: "127.0.0.1:0", KeyHeader: "Idempotency-Key", Entity: "order_id", Sink: sink}
	return p, nil, func() { srv.Close(); ref.Close(); sink.Close() }, nil
}

// EntityOf is where the profile's requests name their operation: its entity, or, when it
// declares none, the path segment where {{.Entity}} stands in operation.path, else the one
// field of operation.body (JSON or form-encoded) whose value is exactly {{.Entity}}.
func EntityOf(p *profile.Profile) (profile.EntityRef, error) {
	e, err := entityOf(p)
	if err != nil {
		return e, err
	}
	// An MCP operation's body is its tool's arguments; the front reads the request.
	return mcpEntity(p, e), nil
}

func entityOf(p *profile.Profile) (profile.EntityRef, error) {
	if p.Entity != nil {
		return *p.Entity, nil
	}
	if path, _, _ := strings.Cut(p.Operation.Path, "?"); strings.Count(path, "{{.Entity}}") == 1 {
		return profile.EntityRef{Path: path}, nil
	}
	const sample = "idemproof-entity-sample"
	body, err := profile.Render(p.Operation.Body, sample)
	var found []string
	if err == nil && !gjson.Valid(body) {
		for _, field := range profile.FormFieldNames(body) {
			if profile.FormValue(body, field) == sample {
				found = append(found, field)
			}
		}
		if len(found) == 1 {
			return profile.EntityRef{Form: found[0]}, nil
		}
	}
	if err == nil && gjson.Valid(body) {
		var walk func(prefix string, v gjson.Result)
		walk = func(prefix string, v gjson.Result) {
			v.ForEach(func(k, child gjson.Result) bool {
				path := k.String()
				if prefix != "" {
					path = prefix + "." + path
				}
				if child.IsObject() || child.IsArray() {
					walk(path, child)
				} else if child.Type == gjson.String && child.Str == sample {
					found = append(found, path)
				}
				return true
			})
		}
		walk("", gjson.Parse(body))
	}
	if len(found) != 1 {
		return profile.EntityRef{}, fmt.Errorf("profile %s: entity: client-check needs to know where a request names its logical operation; declare it, e.g. entity: {json: order_id} (a JSON path into the body), {form: metadata[order_id]} (a field of a form-encoded body), {header: X-Order-Id} or {path: /v1/charges/{{.Entity}}/refunds} (the path segment that names it)", p.Name)
	}
	return profile.EntityRef{JSON: found[0]}, nil
}

func newEnv(p *profile.Profile, entity profile.EntityRef, base, admin, outcomeFile string) Env {
	env := Env{
		BaseURL: base, AdminURL: admin, OutcomeFile: outcomeFile,
		KeyHeader: p.KeyHeader, KeyField: p.KeyField,
		OperationMethod: p.Operation.Method,
		OperationURL:    base + p.Operation.Path,
		OperationBody:   p.Operation.Body,
		Entity:          entity.String(),
	}
	if body, err := profile.Render(p.Operation.Body, "x"); err == nil && gjson.Get(body, "jsonrpc").Exists() {
		env.MCPEndpoint = env.OperationURL
	}
	if p.IsMCP() {
		env.MCPTool = p.Operation.Tool
		if base != "" {
			env.MCPEndpoint = env.OperationURL
		}
	}
	if p.IsStdio() {
		env.OperationMethod, env.OperationURL = "", ""
	}
	return env
}

// NewReport wraps the checks of o, the applied fault schedule, then one INFO result per
// operation (Operations), into a report the report renderers accept.
func NewReport(o Observation, seed int64, started time.Time) verdict.Report {
	results := append(append(Check(o), scheduleResult(o)), Operations(o)...)
	for _, r := range results {
		if r.Evidence.Record != nil {
			r.Evidence.Record.Seed = seed // the run that repeats it, once runs are combined (--repeat)
		}
	}
	return verdict.Report{
		SchemaVersion: verdict.ReportSchemaVersion,
		Tool:          "idemproof client-check",
		Seed:          seed,
		Started:       started.UTC(),
		DurationMS:    millis(time.Since(started)),
		Targets:       []string{Target},
		Results:       results,
	}
}

// observe joins the journal's records of the operation with what the front saw of each.
func observe(ctx context.Context, proxy faultproxy.Controller, fr *front, p *profile.Profile) (Observation, error) {
	journal, err := proxy.Journal(ctx, faultproxy.JournalQuery{})
	if err != nil {
		return Observation{}, fmt.Errorf("read journal: %w", err)
	}
	classifier := p.Classifier()
	o := Observation{Delivered: map[uint64]Delivered{}, Entities: map[string]string{}, Classifier: classifier}
	for _, r := range journal {
		n, err := strconv.ParseUint(r.Headers[HeaderAttempt], 10, 64)
		if err != nil {
			continue // not an attempt of the operation (the front numbers every one)
		}
		o.Attempts = append(o.Attempts, r)
		fa, ok := fr.snapshot(n)
		if !ok {
			continue
		}
		d := Delivered{Entity: fa.entity, Payload: fa.payload, Kind: fa.kind, Start: fa.start, End: fa.end, Sent: fa.sent, Body: shortBody(fa.body), Class: outcome.Info}
		if d.End.IsZero() {
			d.End = d.Start
		}
		complete := r.ClientResult == faultproxy.ClientDelivered || r.ClientResult == faultproxy.ClientError
		if complete && fa.wrote {
			body := fa.body
			if decoded, err := contentcoding.Decode(fa.header.Get("Content-Encoding"), body, maxDeliveredBody); err == nil {
				body = decoded // a gzipped answer is classed by what it says
			}
			if mt := p.NewMCPTransport(); mt != nil && strings.HasPrefix(fa.header.Get("Content-Type"), "text/event-stream") {
				// An MCP answer on an event stream is classed by the JSON-RPC response in it.
				if resp := mt.Comparable(body, ""); resp != nil {
					body = resp
				}
			}
			answer := outcome.Answer{Status: r.ClientStatus, Header: fa.header, Body: body}
			d.Class = classifier.Classify(answer)
			// An HTTP-date Retry-After is a wait from the moment the answer left.
			d.RetryAfter, d.RetryHint = retryHint(fa.header, d.answered())
			d.NoRetry = noRetry(fa.header)
			if hint, wait, ok := outcome.RetryAfterIn(classifier, answer); d.RetryAfter == 0 && ok {
				// A refusal inside a 200 says it in its body, where the profile's rule says.
				d.RetryAfter, d.RetryHint = wait, hint.Path
			}
		}
		o.Delivered[r.Seq] = d
		if fa.entity != "" {
			o.Entities[r.BodySHA256] = fa.entity
		}
	}
	return o, nil
}

// retryHint is the wait an answer's headers ask for and the header that says it:
// Retry-After as delay-seconds or an HTTP date (RFC 9110 §10.2.3, the date counted from
// when the answer left), or Retry-After-Ms (milliseconds, which the Stainless-generated
// SDKs read first). Where both are sent the shorter wins: a client that reads either one
// honours the answer.
func retryHint(h http.Header, at time.Time) (time.Duration, string) {
	var wait time.Duration
	var from string
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if secs, err := strconv.Atoi(v); err == nil && secs >= 0 {
			wait, from = time.Duration(secs)*time.Second, HintRetryAfter
		} else if t, err := http.ParseTime(v); err == nil && t.After(at) {
			wait, from = t.Sub(at), HintRetryAfterDate
		}
	}
	if ms, err := strconv.ParseFloat(strings.TrimSpace(h.Get("Retry-After-Ms")), 64); err == nil && ms > 0 && ms < float64(math.MaxInt64/int64(time.Millisecond)) {
		if d := time.Duration(ms * float64(time.Millisecond)); from == "" || d < wait {
			wait, from = d, HintRetryAfterMs
		}
	}
	if wait <= 0 {
		return 0, ""
	}
	return wait, from
}

// noRetry is an answer's request not to retry, as "x-should-retry: false" ("" none).
func noRetry(h http.Header) string {
	for _, name := range ShouldRetryHeaders {
		if v := h.Get(name); strings.EqualFold(strings.TrimSpace(v), "false") {
			return strings.ToLower(name) + ": false"
		}
	}
	return ""
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

// prepareStateDir returns the client's state folder: dir (created if missing, kept), or
// a fresh temporary one that cleanup removes.
func prepareStateDir(dir string) (string, func(), error) {
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", nil, fmt.Errorf("create state folder: %w", err)
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			return "", nil, fmt.Errorf("state folder path: %w", err)
		}
		return abs, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "idemproof-client-state-")
	if err != nil {
		return "", nil, fmt.Errorf("create state folder: %w", err)
	}
	return dir, func() { os.RemoveAll(dir) }, nil
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

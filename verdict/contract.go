package verdict

import (
	"time"

	"github.com/idemproof/idemproof/downstream"
	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/storefault"
)

// Level is the strength of the requirement a scenario checks.
type Level string

const (
	LevelSafety Level = "SAFETY" // an invariant: violated is FAIL whatever the profile says
	LevelMust   Level = "MUST"   // a MUST of the spec, or what the profile declared
	LevelShould Level = "SHOULD" // missed is NON-STRICT (FAIL under --strict)
	LevelPolicy Level = "POLICY" // the spec is silent: the observed policy is reported (INFO)
)

// Verdict is a scenario's result against one target (README, "Verdicts").
type Verdict string

const (
	Pass      Verdict = "PASS"
	Fail      Verdict = "FAIL"
	NonStrict Verdict = "NON-STRICT"
	Info      Verdict = "INFO"
	NA        Verdict = "N/A"
	Unknown   Verdict = "UNKNOWN" // the checker could not decide; never counted as a pass
)

// Evidence categories (Jepsen style), counted per scenario.
const (
	CatDuplicated = "duplicated" // more than one side effect for one key inside the window
	CatLost       = "lost"       // the client saw success, no side effect exists
	CatFabricated = "fabricated" // success delivered while nothing executed
	CatLeaked     = "leaked"     // one principal (or endpoint) got another's stored response
	CatStuck      = "stuck"      // a key that never completes (wedged at 409)
	CatDiverged   = "diverged"   // a replay that differs from the committed response
	CatRecovered  = "recovered"  // a lost response recovered by a retry (good)
)

// categoryCounts says what each category's count counts, for a reader of "leaked=1".
var categoryCounts = map[string]string{
	CatDuplicated: "side effects beyond the one a key allows",
	CatLost:       "successes the client saw with no side effect behind them",
	CatFabricated: "successes delivered while nothing had executed",
	CatLeaked:     "answers carrying the stored response of another request (payload, principal, endpoint or entity)",
	CatStuck:      "keys wedged: refused as in flight with nothing running",
	CatDiverged:   "replays that differ from the committed response",
	CatRecovered:  "lost responses a retry recovered",
}

// CategoryCounts says what an evidence category's count counts ("" for a category it
// does not know).
func CategoryCounts(category string) string { return categoryCounts[category] }

// OpType is a history event type: invoke, then ok / fail / info (unknown to the client).
type OpType string

const (
	OpInvoke OpType = "invoke"
	OpOK     OpType = "ok"
	OpFail   OpType = "fail"
	OpInfo   OpType = "info"
)

// Op is one history event of one attempt, as the runner's client saw it.
type Op struct {
	Index   int               `json:"index"`
	Client  int               `json:"client"`  // logical client (goroutine) number
	Attempt int               `json:"attempt"` // attempt number of the client's operation, 1-based
	Type    OpType            `json:"type"`
	Key     string            `json:"key,omitempty"`
	Step    string            `json:"step,omitempty"` // the scenario step that issued it ("original", "retry", "other-payload", ...)
	Time    time.Time         `json:"time"`
	Status  int               `json:"status,omitempty"`
	Body    []byte            `json:"body,omitempty"`
	Headers map[string]string `json:"headers,omitempty"` // allow-listed response headers
	Error   string            `json:"error,omitempty"`   // transport error for info/fail
	// Class is what the answer means, by the profile's outcome rules; "info" when the
	// client could not see the outcome. Set on completion events only.
	Class outcome.Class `json:"class,omitempty"`
	// RPCID and RPCMethod are the JSON-RPC request's id and method of the attempt (MCP
	// transport), on completion events.
	RPCID     string `json:"rpc_id,omitempty"`
	RPCMethod string `json:"rpc_method,omitempty"`
	// RequestSHA256 is the hex SHA-256 of the request body as sent, when it is unique to
	// the attempt (a JSON-RPC request with its own id): the proxy journal's body_sha256.
	RequestSHA256 string `json:"request_sha256,omitempty"`
	// PayloadSHA256 is the hex SHA-256 of the request as the scenario built it, before
	// the transport added what is unique to the attempt (a JSON-RPC id): two attempts
	// that send the same tool call share it, whatever their ids. Empty where the body
	// sent is the payload (plain HTTP: the journal's body_sha256 says it).
	PayloadSHA256 string `json:"payload_sha256,omitempty"`
	// ReusedConn: the attempt went over a connection an earlier attempt had used
	// (keep-alive), as the client saw it; recorded by the keep-alive key sets.
	ReusedConn bool `json:"reused_conn,omitempty"`
}

// Record is everything observed in one scenario run: the checker's only input.
type Record struct {
	History []Op                `json:"history"`
	Journal []faultproxy.Record `json:"journal"`
	Ledger  map[string]int      `json:"ledger"` // side-effect counts per entity/operation, e.g. "refund"
	// LedgerErr is set when a ledger probe failed: checkers then answer UNKNOWN.
	LedgerErr string `json:"ledger_error,omitempty"`
	// LateLedger is the ledger read again at the end of the target's run, when that
	// changed the verdict (see the result's message).
	LateLedger map[string]int `json:"late_ledger,omitempty"`
	// LedgerBefore is the operation's ledger read just before a step, by step name, for
	// the steps that ask for it (a retry after the server was started again: did its
	// ledger survive?).
	LedgerBefore map[string]int `json:"ledger_before,omitempty"`
	Seed         int64          `json:"seed"`
	Entity       string         `json:"entity"`
	// SideEntities are the entities a key set's requests acted on, a few keys each
	// (keysPerSideEntity): their ledgers are read too and added to the operation's count,
	// so no ledger read counts more effects than a paginated list's first page shows.
	SideEntities []string `json:"side_entities,omitempty"`
	// OtherEntity is the entity a Step.OtherEntity step acted on ("" when none did); its
	// ledger is Ledger[LedgerOtherEntity].
	OtherEntity string `json:"other_entity,omitempty"`
	// Downstream is every call the target made to its vendor for this entity, as the
	// downstream sink recorded it (boundary scenarios only).
	Downstream []downstream.Call `json:"downstream,omitempty"`
	// DownstreamErr is set when the sink's calls could not be read: the boundary
	// checkers then answer UNKNOWN.
	DownstreamErr string `json:"downstream_error,omitempty"`
	// Store is every switch of the store fault point (profile store:) the scenario made,
	// in order, with the point's counters at each (store/* scenarios only).
	Store []StoreEvent `json:"store,omitempty"`
	// Plan is how the runner fitted the scenario to its target before it ran (the
	// windows the profile declares, the latency the preflight measured), when that
	// changed anything; nil when the scenario ran as written.
	Plan *Plan `json:"plan,omitempty"`
}

// Plan is what the runner changed in a scenario's timing and sizes so that it fits its
// target: a scenario whose own timing runs past a declared window, or whose many requests
// a slow target cannot answer within the scenario's time limit, would otherwise prove
// nothing (UNKNOWN) where it can be judged. A plan never makes a scenario prove less
// without saying so in Notes.
type Plan struct {
	// GiveUpAfterMS is the client timeout, in milliseconds, of the attempt a scenario
	// gives up on (recovery/client-gave-up), where it is shorter than the profile's
	// client_timeout so that the retry after the held work still falls inside the
	// declared retention; 0: client_timeout.
	GiveUpAfterMS float64 `json:"give_up_after_ms,omitempty"`
	// Notes say what was changed and why, with the numbers; the result's message ends
	// with them.
	Notes []string `json:"notes,omitempty"`
}

// GiveUpAfter is GiveUpAfterMS as a duration (0 on a nil plan).
func (p *Plan) GiveUpAfter() time.Duration {
	if p == nil {
		return 0
	}
	return time.Duration(p.GiveUpAfterMS * float64(time.Millisecond))
}

// StoreEvent is one switch of the store fault point, with the point's counters (since it
// started) at that moment: what changed between two events is what the API did to its
// store in between.
type StoreEvent struct {
	At    time.Time `json:"at"`
	Fault string    `json:"fault"`          // "down", "reset", "latency", "hang", or StoreUp
	Step  string    `json:"step,omitempty"` // the step it was switched before ("" at the scenario's end)
	storefault.Stats
}

// StoreUp is the StoreEvent.Fault of a point healed: the store is back.
const StoreUp = "up"

// Evidence is what a report shows for a verdict.
type Evidence struct {
	Categories map[string]int `json:"categories,omitempty"`
	Examples   []string       `json:"examples,omitempty"`
	Record     *Record        `json:"record,omitempty"`
	// Blame names the attempts that broke the rule (a FAIL's offending answers), for the
	// reports to mark in the timeline with what was expected instead.
	Blame []Blame `json:"blame,omitempty"`
}

// Blame is one attempt a checker holds responsible for a FAIL.
type Blame struct {
	// Index is the Op.Index of the attempt's completion event in Record.History.
	Index int `json:"index"`
	// Want is the answer the rule expected instead, for people: "422 (mismatch)", "the
	// committed 201", "no second execution".
	Want string `json:"want"`
	// Committed is the response the attempt should have replayed, where the rule compares
	// the two (a diverged or fabricated replay): reports show the difference.
	Committed *Response `json:"committed,omitempty"`
}

// Response is a status and a body, as evidence.
type Response struct {
	Status int    `json:"status"`
	Body   []byte `json:"body,omitempty"`
}

// SummaryLabel marks a result that describes the run rather than judging it (the fault
// schedule as applied, a note): reports list it under Notes whatever its verdict.
const SummaryLabel = "summary"

// Result is one scenario against one target.
type Result struct {
	ScenarioID  string   `json:"scenario"`
	Description string   `json:"description"`
	Requirement string   `json:"requirement"`
	Source      string   `json:"source"`
	Level       Level    `json:"level"`
	Labels      []string `json:"labels"`
	Target      string   `json:"target"` // profile name
	Verdict     Verdict  `json:"verdict"`
	Message     string   `json:"message"` // one line: what was observed
	Evidence    Evidence `json:"evidence"`
	// Undeclared names, for an N/A result, the profile fields to declare for the
	// scenario to be judged, all of them (profile.Profile.Undeclared); empty when what
	// it lacks is no declaration but a fact of the target (its transport, the key shapes
	// it accepts). The reports rank them: what to declare next.
	Undeclared []string      `json:"undeclared,omitempty"`
	Duration   time.Duration `json:"-"`
	DurationMS float64       `json:"duration_ms"`
	// KnownFailure marks a failing result the run's baseline already had failing (with
	// BaselineVerdict, its verdict there): listed in every report, not failing the run.
	KnownFailure    bool    `json:"known_failure,omitempty"`
	BaselineVerdict Verdict `json:"baseline_verdict,omitempty"`
	// RunVerdicts counts the verdicts the scenario got in each run of a repeated check
	// (--repeat, package report/rounds); Verdict is the most telling of them.
	RunVerdicts map[Verdict]int `json:"run_verdicts,omitempty"`
	// Provisional marks a FAIL as the runner hands it to RunConfig.Progress when it rests
	// only on effects missing from a ledger that is read again once the target's run
	// ends (a ledger may lag its writes): the judgment kept may still change. Never set
	// in a Report, whose results are final.
	Provisional bool `json:"-"`
}

// ReportSchemaVersion is the version of the JSON report's schema; bumped on any change
// that is not a pure addition.
const ReportSchemaVersion = 1

// Report is one run: every scenario against every target.
type Report struct {
	SchemaVersion int       `json:"schema_version"`
	Tool          string    `json:"tool"` // "idemproof <version>"
	Seed          int64     `json:"seed"`
	Strict        bool      `json:"strict"`
	Started       time.Time `json:"started"`
	DurationMS    float64   `json:"duration_ms"`
	Targets       []string  `json:"targets"`
	// TargetSources maps a target to how a command line names its profile (a file path
	// or a built-in name), where that differs from the target's name.
	TargetSources map[string]string `json:"target_sources,omitempty"`
	// Complete is true when every selected scenario ran to a verdict against every
	// target. A run stopped early (its context cancelled: SIGINT, SIGTERM, a deadline) is
	// not complete: Results holds what finished, NotRun what never started, Interrupted
	// why. An incomplete report proves nothing about the scenarios it lacks.
	Complete    bool     `json:"complete"`
	Interrupted string   `json:"interrupted,omitempty"`
	NotRun      []NotRun `json:"not_run,omitempty"`
	Results     []Result `json:"results"`
	// Baseline is the report the run was compared with (--baseline), as given.
	Baseline string `json:"baseline,omitempty"`
	// Skipped is the scenario IDs a team decided not to run (--skip), sorted.
	Skipped []string `json:"skipped,omitempty"`
	// Shard is "i/n" when the run is one shard of the catalogue (--shard); Shards lists
	// them after `idemproof report merge`.
	Shard  string   `json:"shard,omitempty"`
	Shards []string `json:"shards,omitempty"`
	// Repeat is the command line that repeats the whole run, set by a tool whose
	// results are not repeated one by one with `idemproof check --only` (client-check
	// reruns the client under the same seed and faults).
	Repeat string `json:"repeat,omitempty"`
	// Runs is how many times the catalogue ran (--repeat); 0 or 1 for one run.
	Runs int `json:"runs,omitempty"`
}

// Incomplete reports whether the run stopped before every selected scenario was judged:
// Complete false with the reason recorded (Interrupted or NotRun). A Report built by hand
// or by another tool, which sets neither, is not taken as stopped.
func (r *Report) Incomplete() bool {
	return !r.Complete && (r.Interrupted != "" || len(r.NotRun) > 0)
}

// NotRun is a selected scenario that never started against a target because the run
// was stopped first.
type NotRun struct {
	ScenarioID string `json:"scenario"`
	Target     string `json:"target"`
}

// TargetNames is the report's targets in its order (Targets), completed with any target
// only the results name, so a hand-made or partial report still accounts for every
// result.
func (r *Report) TargetNames() []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range r.Targets {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	for _, res := range r.Results {
		if !seen[res.Target] {
			seen[res.Target] = true
			out = append(out, res.Target)
		}
	}
	return out
}

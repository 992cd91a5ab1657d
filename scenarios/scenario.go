package scenarios

import (
	"github.com/idemproof/idemproof/downstream"
	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/verdict"
)

// Scenario is one catalogue entry: plain data (what to send, which faults, what is
// required) plus a pure checker. The runner interprets Steps; the checker judges the
// Record they produced.
type Scenario struct {
	ID          string               `json:"id"`
	Description string               `json:"description"`
	Requirement string               `json:"requirement"`
	Source      string               `json:"source"`
	Level       verdict.Level        `json:"level"`
	Labels      []string             `json:"labels"`
	Needs       []profile.Capability `json:"needs,omitempty"`
	Faults      []FaultOn            `json:"faults,omitempty"`
	Steps       []Step               `json:"steps"`
	// Settle, when set, ends the scenario with the settle step (SettleStep): once every
	// attempt of Steps has ended, sequential retries with the settle payload must get the
	// committed response. A key still refused as in flight, or never answered, after the
	// declared lock timeout (or the client timeout) is stuck.
	Settle *Settle `json:"settle,omitempty"`
	// Vendor are faults the downstream sink injects on the target's calls to its vendor
	// for this scenario's entity (scenarios that need downstream).
	Vendor []VendorFault `json:"vendor,omitempty"`
	Check  Checker       `json:"-"`
}

// VendorFault makes the downstream sink answer the Nth call (1-based) of the scenario's
// entity with a fault (downstream.Fault503Before, Fault503After, FaultResetAfter).
type VendorFault struct {
	Nth   int              `json:"nth"`
	Fault downstream.Fault `json:"fault"`
}

// SettleStep names the attempts of the settle step in the history.
const SettleStep = "settle"

// Settle is what the settle step sends: the scenario's key, the default principal, and
// the payload whose committed response it must get.
type Settle struct {
	Payload Payload `json:"payload,omitempty"` // default the operation's body
}

// Checker judges one scenario run. It is a pure function: no network, no clock.
type Checker func(rec verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence)

// FaultOn installs a proxy fault for the scenario's own key (so scenarios running in
// parallel never see each other's faults), on some attempt ordinals or on one step.
type FaultOn struct {
	// Attempts limits the fault to attempt ordinals of the key (nil: every attempt).
	Attempts *faultproxy.Range `json:"attempts,omitempty"`
	// Step limits the fault to the attempts of the named step (the runner marks them with
	// the StepHeader request header); used where ordinals are racy.
	Step  string               `json:"step,omitempty"`
	Fault faultproxy.FaultSpec `json:"fault"`
	// DurationOf sets Fault.Duration from the profile at run time.
	DurationOf DurationRef `json:"duration_of,omitempty"`
}

// DurationRef names a duration derived from the profile.
type DurationRef string

const (
	PastClientTimeout    DurationRef = "past-client-timeout"    // the hold timeout + 300ms: the client has given up
	QuarterSlow          DurationRef = "quarter-slow"           // a quarter of slow_operation: the original is in flight
	QuarterClientTimeout DurationRef = "quarter-client-timeout" // a delay the client waits through
)

// StepHeader marks the attempts of a step that a FaultOn.Step rule must find.
const StepHeader = "X-Idemproof-Step"

// Step is one request of a scenario, possibly repeated concurrently.
type Step struct {
	Name      string  `json:"name"`                // "original", "retry", ...: names the history ops
	Payload   Payload `json:"payload,omitempty"`   // which body; default the operation's body
	Key       KeyForm `json:"key,omitempty"`       // which key; default the scenario's key
	Variant   Variant `json:"variant,omitempty"`   // a same-meaning respelling of the request
	Hook      Hook    `json:"hook,omitempty"`      // a profile test hook to attach
	Principal int     `json:"principal,omitempty"` // index into profile principals (0 = default)
	// NewSession sends the step's attempts in a session of their own (MCP: a client that
	// initialized again, as an agent does after a transport error); plain HTTP has none.
	NewSession bool `json:"new_session,omitempty"`
	// Copies sends the same request this many times at once (a burst); 0 means 1.
	Copies int `json:"copies,omitempty"`
	// Background starts the step and moves on without waiting for its answer; a later
	// WaitBackground (or the end of the scenario) waits for it.
	Background bool `json:"background,omitempty"`
	Wait       Wait `json:"wait,omitempty"` // what to wait for before sending
	// Direct sends the step straight to the target's base_url, past the proxy: a Go
	// proxy rewrites header names to their canonical case, which would hide what a
	// lower-case header name does. Direct attempts are not in the journal.
	Direct bool `json:"direct,omitempty"`
	// KeySet gives every copy its own fresh key, copy i the set's key i: two steps naming
	// the same set send the same keys (the second one repeats the first).
	KeySet string `json:"key_set,omitempty"`
	// KeepAlive sends the copies over at most MaxKeepAliveConns reused keep-alive
	// connections (with KeySet; see sendKeySet for why that is safe to count).
	KeepAlive bool `json:"keep_alive,omitempty"`
	// OtherEntity sends the step's request for another entity than the scenario's (one of
	// its own, created by entity_setup when the profile has one), with the same key.
	OtherEntity bool `json:"other_entity,omitempty"`
	// ChangeMember (1-based) sends the operation's body with its ChangeMember-th
	// changeable member (Profile.changeableMembers) given another value; a step past the
	// body's last changeable member is not sent.
	ChangeMember int `json:"change_member,omitempty"`
	// FreshKeys sends this many requests through the proxy, a few at a time, each with a
	// fresh key of its own and acting on a side entity (the scenario's entity with
	// sideEntitySuffix): newer keys that a bounded key store would evict older ones for,
	// whose side effects stay out of the scenario's ledger (sendFreshKeys).
	FreshKeys int `json:"fresh_keys,omitempty"`
	// Twice sends every copy of a KeySet step a second time right after its answer, with
	// the same key (on the same connection when KeepAlive), recorded as step Name+"-again".
	Twice bool `json:"twice,omitempty"`
	// CountBefore reads the operation's ledger just before the step
	// (Record.LedgerBefore[Name]): what the target holds at that moment, e.g. once a
	// killed server was started again.
	CountBefore bool `json:"count_before,omitempty"`
	// Store switches the target's key store (profile store:) before the step is sent:
	// a fault of the store fault point, or StoreBack to heal it. A scenario that switches
	// one runs alone on its target, and its store is healed when its steps are done.
	Store StoreFault `json:"store,omitempty"`
}

// Payload selects the request body.
type Payload string

const (
	PayloadOriginal   Payload = ""           // operation.body
	PayloadAltered    Payload = "altered"    // operation.altered_body
	PayloadOther      Payload = "other"      // other_operation (its method, path and body)
	PayloadBusiness   Payload = "business"   // business_error.body
	PayloadValidation Payload = "validation" // validation_error.body
)

// KeyForm selects the key a step sends.
type KeyForm string

const (
	KeyScenario KeyForm = ""          // the scenario's fresh key
	KeyNone     KeyForm = "none"      // no key at all
	KeyEmpty    KeyForm = "empty"     // the key header (or field) present and empty
	Key255      KeyForm = "len-255"   // a fresh key of the longest length the API accepts (255, or expect.max_key_length)
	Key256      KeyForm = "len-256"   // a fresh key one character longer
	KeyControl  KeyForm = "control"   // a fresh key with a control character (TAB) inside
	KeyQuoted   KeyForm = "sf-quoted" // the scenario's key in RFC 8941 sf-string form: "key"
)

// Variant respells a request without changing its meaning (or, for the query string and
// the header, with a change the target should ignore).
type Variant string

const (
	VariantNone            Variant = ""
	VariantKeyOrder        Variant = "json-key-order"   // object members in reverse order
	VariantWhitespace      Variant = "json-whitespace"  // indented instead of as written
	VariantNumberSpelling  Variant = "number-spelling"  // integers written as 4900.0
	VariantQueryString     Variant = "query-string"     // an added ?idemproof=1
	VariantUnrelatedHeader Variant = "unrelated-header" // an added X-Idemproof-Unrelated header
	VariantLowerCaseHeader Variant = "lower-case-header"
)

// Hook attaches a profile test hook to a step.
type Hook string

const (
	HookNone            Hook = ""
	HookSlow            Hook = "slow"              // slow_operation as declared
	HookSlowPastLock    Hook = "slow-past-lock"    // slow_operation held for 2x lock_timeout
	HookSlowPastTimeout Hook = "slow-past-timeout" // slow_operation held past client_timeout, which the attempt keeps: the client gives up
	// HookSlowPastTimeoutWaited is HookSlowPastTimeout's hold with a client that waits it
	// out: the control that tells what the target does when its client stays.
	HookSlowPastTimeoutWaited Hook = "slow-past-timeout-waited"
	HookFail                  Hook = "fail" // fail_operation
	// HookSlowFail is slow_operation and fail_operation on one request: the work is
	// held, then fails (CapSlowFail: both declared, and one request can carry both).
	HookSlowFail         Hook = "slow-fail"
	HookCrashAfterKey    Hook = "crash-after-key"    // crash.after_key
	HookCrashAfterCommit Hook = "crash-after-commit" // crash.after_commit
)

// Wait is what a step waits for before it is sent. Only declared windows are waited out:
// the runner never sleeps for readiness.
type Wait string

const (
	WaitNone         Wait = ""
	WaitBackground   Wait = "background"        // every background step has answered
	WaitInsideWindow Wait = "inside-retention"  // retention minus a margin since the first answer
	WaitPastWindow   Wait = "past-retention"    // retention plus a margin since the first answer
	WaitPastLock     Wait = "past-lock-timeout" // lock_timeout plus a margin since the step before
	WaitPastHold     Wait = "past-hold"         // the slow-past-timeout hold plus a margin since the step before began
	// WaitPastHoldAgain is WaitPastHold with its margin twice: a control repeated this
	// way is always later after its original than a WaitPastHold retry after its own.
	WaitPastHoldAgain Wait = "past-hold-again"
)

package clientcheck

import (
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/idemproof/idemproof/downstream"
	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/outcome"
)

// Observation is everything one run recorded: the checks' only input. Run fills it; a
// test may build one by hand.
type Observation struct {
	// Attempts are the journal records of the keyed operation only.
	Attempts []faultproxy.Record
	// Delivered is what the front saw of each attempt, by journal Seq: the operation the
	// request named, the answer's class and Retry-After, its start and end.
	Delivered map[uint64]Delivered
	// Entities maps a request body's SHA-256 (hex) to the operation it names, for
	// attempts without a Delivered entry (observations built by hand).
	Entities map[string]string
	// Classifier classifies the journal status of an attempt without a Delivered class;
	// nil means the reference's statuses (409 in flight, 422 mismatch).
	Classifier outcome.Classifier
	// Ledger is the number of side effects (refunds) per operation; LedgerErr is set when
	// reading it failed, and the checks that need it answer UNKNOWN.
	Ledger    map[string]int
	LedgerErr string
	// EntityRef is where the profile finds the operation a request names ("json:order_id",
	// "header:X-Order-Id"), for messages.
	EntityRef string
	// LedgerBefore is each operation's count before its first attempt (what Ledger is
	// counted from): an operation whose key an earlier run used already took effect, and
	// this run's answers to it are replays.
	LedgerBefore map[string]int
	// RetryAfter is the Retry-After of an in-flight answer by journal Seq, for attempts
	// without a Delivered entry; without either, MinBackoff is the least wait expected.
	RetryAfter map[uint64]time.Duration
	MinBackoff time.Duration
	// RetryAfterCap is the longest wait a client may cap a retry hint at and still honour
	// it (0: DefaultRetryAfterCap); RetryAfterCapDeclared makes it a bound too: a client
	// that waits longer after a longer hint hangs its operation (the profile's
	// retry_after_cap).
	RetryAfterCap         time.Duration
	RetryAfterCapDeclared bool
	// Patience is how long a client may wait for one answer (client_patience; 0:
	// profile.DefaultClientPatience): a held answer waited out that long is
	// client/attempt-timeout's finding.
	Patience time.Duration
	// Retention is the API's declared key retention (0: not declared): a second effect
	// whose retry reached the API after it is client/retry-after-retention's, not a
	// duplicate.
	Retention time.Duration
	// KeyOptional: the API executes a request without a key (expect.missing_key:
	// optional), so an unkeyed attempt that was never retried is no finding.
	KeyOptional bool
	// KeyIgnored: the API ignores keys (expect.honours_key: false); its duplicates are
	// its own, and client/blind-resend judges the client.
	KeyIgnored bool
	// Outcomes is the client's own view (the outcome file); OutcomesWritten is false when
	// the client wrote no file; OutcomeErr is set when the file did not parse.
	Outcomes        []Outcome
	OutcomesWritten bool
	OutcomeErr      string
	// ExitErr is the code under test's error (or non-zero exit); "" when it succeeded.
	ExitErr string
	// TimedOut: the code under test was killed at the run's timeout. A slow machine and a
	// stuck client look alike from here, so what it had not finished is not judged.
	TimedOut bool
	// ClientDuration is how long the code under test ran: every check judges that run.
	ClientDuration time.Duration
	// Schedule is the fault schedule as applied.
	Schedule AppliedSchedule
	// Restarts are the kills and restarts of the code under test, in order.
	Restarts []Restart
	// Vendor is the downstream ledger per operation (vendor.go), read after a settle
	// step; nil when the target calls no vendor the run watches.
	Vendor map[string]downstream.Ledger
	// VendorCalls are the vendor calls per operation, as the sink recorded them.
	VendorCalls map[string][]downstream.Call
	// VendorErr is set when the vendor's calls could not be read (its check is UNKNOWN).
	VendorErr string
}

// timingTolerance absorbs the gap between where the proxy stamps a record's time and
// where the client's wait begins; it is far below any Retry-After (whole seconds).
const timingTolerance = 20 * time.Millisecond

// DefaultMinBackoff is the least wait expected after a 409 that carried no Retry-After.
const DefaultMinBackoff = 50 * time.Millisecond

// Delivered is what the front saw of one attempt.
type Delivered struct {
	// Entity is the operation the request named ("" when it named none).
	Entity string `json:"entity,omitempty"`
	// Payload is the SHA-256 (hex) of the request body without the key ("" = the
	// journal's body hash stands): what a retry under a fresh key re-sends unchanged.
	Payload string `json:"payload_sha256,omitempty"`
	// Kind is the fault kind dealt to the operation ("" none).
	Kind string `json:"kind,omitempty"`
	// Class is the delivered answer's class by the profile's classifier; info when the
	// client got no complete answer.
	Class outcome.Class `json:"class"`
	// RetryAfter is the wait the delivered answer asked for (0 = none): its Retry-After,
	// or, where it has none, the retry hint its class's outcome rule names in the body.
	RetryAfter time.Duration `json:"-"`
	// RetryHint is where RetryAfter came from: "Retry-After", "Retry-After-Ms",
	// "Retry-After (HTTP date)", or the body path of the class's outcome rule; "" is
	// Retry-After.
	RetryHint string `json:"-"`
	// NoRetry is the answer's request not to retry, as "x-should-retry: false" (the
	// header as sent); "" when it made none.
	NoRetry string    `json:"no_retry,omitempty"`
	Start   time.Time `json:"start"`
	End     time.Time `json:"end"`
	// Sent is when the front last handed the answer's bytes on, stamped before the
	// write: no later than the client can have had the whole answer (zero: not seen).
	// The wait after an answer is counted from here, so a loaded machine's late End
	// never shortens a correct client's wait.
	Sent time.Time `json:"sent,omitempty"`
	// Body is the start of the delivered body.
	Body []byte `json:"body,omitempty"`
}

// referenceStatuses classify hand-built observations: the reference server's statuses.
var referenceStatuses = outcome.Statuses{InFlight: 409, Mismatch: 422, MissingKey: 400, Business: 402, Validation: 400}

// classOf is an attempt's class: the front's, else its journal status classified.
func (o *Observation) classOf(r faultproxy.Record) outcome.Class {
	if d, ok := o.Delivered[r.Seq]; ok && d.Class != "" {
		return d.Class
	}
	if r.ClientResult != faultproxy.ClientDelivered && r.ClientResult != faultproxy.ClientError {
		return outcome.Info
	}
	c := o.Classifier
	if c == nil {
		c = referenceStatuses
	}
	return c.Classify(outcome.Answer{Status: r.ClientStatus})
}

// retryAfterOf is the wait an attempt's answer asked for, and what said it:
// "Retry-After", or the body path of the rule's retry hint.
func (o *Observation) retryAfterOf(r faultproxy.Record) (time.Duration, string, bool) {
	if d, ok := o.Delivered[r.Seq]; ok {
		if d.RetryHint != "" {
			return d.RetryAfter, d.RetryHint, d.RetryAfter > 0
		}
		return d.RetryAfter, HintRetryAfter, d.RetryAfter > 0
	}
	d, ok := o.RetryAfter[r.Seq]
	return d, HintRetryAfter, ok
}

// Where a wait was asked for (Delivered.RetryHint), besides a body path.
const (
	HintRetryAfter     = "Retry-After"
	HintRetryAfterMs   = "Retry-After-Ms"
	HintRetryAfterDate = "Retry-After (HTTP date)"
)

// noRetryOf is what an attempt's answer said against a retry ("" nothing).
func (o *Observation) noRetryOf(r faultproxy.Record) string {
	return o.Delivered[r.Seq].NoRetry
}

// operationOf names the operation of an attempt: the entity its request named, or its
// body hash when it named none.
func (o *Observation) operationOf(r faultproxy.Record) string {
	if d, ok := o.Delivered[r.Seq]; ok && d.Entity != "" {
		return d.Entity
	}
	if e, ok := o.Entities[r.BodySHA256]; ok {
		return e
	}
	h := r.BodySHA256
	if len(h) > 12 {
		h = h[:12]
	}
	return "body:" + h
}

// analysis is an Observation indexed once for the checks: attempts per operation in
// arrival order, the client's last word per operation, every operation named anywhere.
type analysis struct {
	*Observation
	ops      []string
	attempts map[string][]faultproxy.Record
	outcomes map[string]Outcome
	all      []string
}

func analyse(o *Observation) *analysis {
	a := &analysis{Observation: o, attempts: map[string][]faultproxy.Record{}, outcomes: map[string]Outcome{}}
	for _, r := range faultproxy.InArrivalOrder(o.Attempts) {
		op := o.operationOf(r)
		if _, ok := a.attempts[op]; !ok {
			a.ops = append(a.ops, op)
		}
		a.attempts[op] = append(a.attempts[op], r)
	}
	sort.Strings(a.ops)
	for _, oc := range o.Outcomes {
		a.outcomes[oc.Operation] = oc // the last line wins
	}
	all := slices.Clone(a.ops)
	for op := range o.Ledger {
		all = append(all, op)
	}
	for op := range a.outcomes {
		all = append(all, op)
	}
	sort.Strings(all)
	a.all = slices.Compact(all)
	return a
}

// byOperation is the attempts per operation in arrival order; operations are sorted.
func (a *analysis) byOperation() ([]string, map[string][]faultproxy.Record) { return a.ops, a.attempts }

// outcomeOf is the client's last word on an operation.
func (a *analysis) outcomeOf(op string) (Outcome, bool) {
	oc, ok := a.outcomes[op]
	return oc, ok
}

// allOperations is every operation named by an attempt, the ledger or the outcome file.
func (a *analysis) allOperations() []string { return a.all }

// responseLost reports whether the client got no usable answer from this attempt: no
// complete answer (reset, closed, truncated, timed out: info) or a server error. The
// operation may have committed either way.
func responseLost(c outcome.Class) bool {
	return c == outcome.Info || c == outcome.ServerError
}

// unsettled reports whether an attempt left its operation's fate open: its answer was
// lost (responseLost), or it was refused in flight — another attempt under the key is
// running and may still commit, so giving up there is not a known failure either.
func unsettled(c outcome.Class) bool { return responseLost(c) || c == outcome.InFlight }

// knownOutcome reports whether the client learned the operation's fate from this
// attempt: a success or a definite refusal (in flight means "try again", so it is not).
func knownOutcome(c outcome.Class) bool {
	return c.Determinate() && c != outcome.ServerError && c != outcome.InFlight
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// span writes a duration as people say it: 24h, 1m30s, 2.5s (no trailing zero units).
func span(d time.Duration) string {
	s := d.String()
	for _, zero := range []string{"0s", "0m"} {
		if strings.HasSuffix(s, zero) && len(s) > len(zero) && (strings.ContainsAny(s[:len(s)-len(zero)], "hm")) {
			s = strings.TrimSuffix(s, zero)
		}
	}
	return s
}

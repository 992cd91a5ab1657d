package clientcheck

import (
	"slices"
	"sort"
	"time"

	"github.com/idemproof/idemproof/faultproxy"
)

// Observation is everything one run recorded: the checks' only input. Run fills it; a
// test may build one by hand.
type Observation struct {
	// Attempts are the journal records of the keyed operation (POST /v1/refunds) only.
	Attempts []faultproxy.Record
	// Entities maps a request body's SHA-256 (hex) to the operation it names (the
	// order_id), learned from every body that reached the server.
	Entities map[string]string
	// Ledger is the number of side effects (refunds) per operation; LedgerErr is set when
	// reading it failed, and the checks that need it answer UNKNOWN.
	Ledger    map[string]int
	LedgerErr string
	// RetryAfter is the Retry-After of each 409 the client got, by journal Seq; a 409 not
	// in the map carried none, and MinBackoff is the least wait expected after it.
	RetryAfter map[uint64]time.Duration
	MinBackoff time.Duration
	// Outcomes is the client's own view (the outcome file); OutcomesWritten is false when
	// the client wrote no file; OutcomeErr is set when the file did not parse.
	Outcomes        []Outcome
	OutcomesWritten bool
	OutcomeErr      string
	// ExitErr is the code under test's error (or non-zero exit); "" when it succeeded.
	ExitErr string
}

// timingTolerance absorbs the gap between where the proxy stamps a record's time and
// where the client's wait begins; it is far below any Retry-After (whole seconds).
const timingTolerance = 20 * time.Millisecond

// DefaultMinBackoff is the least wait expected after a 409 that carried no Retry-After.
const DefaultMinBackoff = 50 * time.Millisecond

// operationOf names the operation of an attempt: its entity, or its body hash when the
// body never reached the server.
func (o *Observation) operationOf(r faultproxy.Record) string {
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
// complete response (reset, closed, truncated, timed out) or a 5xx. The operation may
// have committed either way.
func responseLost(r faultproxy.Record) bool {
	return r.ClientResult != faultproxy.ClientDelivered || r.ClientStatus >= 500
}

// knownOutcome reports whether the client learned the operation's fate from this
// attempt: a complete 2xx or a definite 4xx (409 means "try again", so it is not one).
func knownOutcome(r faultproxy.Record) bool {
	return r.ClientResult == faultproxy.ClientDelivered &&
		r.ClientStatus >= 200 && r.ClientStatus < 500 && r.ClientStatus != 409
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

package scan

import (
	"fmt"
	"strings"

	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/transport"
	"github.com/idemproof/idemproof/verdict"
)

// The judges are pure functions of what a probe observed. Each answers PASS only with
// proof (a per-execution value repeated, or the ledger counting one), FAIL only on a
// definite violation (a second execution seen, a changed request answered with a
// success), and UNKNOWN, saying why, whenever the answers cannot tell: a replay and a
// second execution look alike without a per-execution value or a ledger.

// executions says what a judgment saw of how often the operation ran for one key (or one
// plain repeat): once, twice, or it cannot tell.
type executions int

const (
	execUnknown executions = iota
	execOnce
	execTwice
)

// counted is a ledger's count of a probe's executions: after minus before.
type counted struct {
	what string // the ledger, for evidence
	n    int
	err  string // the ledger could not be read
}

// evidenceBy is how a judgment tells executions apart: the per-execution value's path,
// or the ledger's count; neither leaves it UNKNOWN.
type evidenceBy struct {
	field  string   // the per-execution value ("" none found)
	ledger *counted // nil without a ledger
}

const noValue = "no per-execution value to tell a replay from a second execution"

// unknownWhy is the UNKNOWN of a judgment that has neither a per-execution value nor a
// ledger, with what else it saw.
func (e evidenceBy) unknownWhy(seen string) string {
	if e.ledger != nil && e.ledger.err != "" {
		return seen + "; the ledger could not be read (" + e.ledger.err + ")"
	}
	return seen + "; " + noValue + " (declare a ledger in --args)"
}

// committed is the proxy's record of an attempt whose answer it lost.
type committed struct {
	reached bool   // the request reached the server
	status  int    // the server's status
	body    []byte // the server's answer, comparable (nil when it could not be read)
	class   outcome.Class
	faulted bool   // the proxy applied the fault
	note    string // why it did not, when it says
}

// lostAnswer is what the replay probe saw: the first call's answer lost after the server
// committed it, then the repeat (after any in-flight answers, the last one).
type lostAnswer struct {
	keyed     bool
	err       string // the probe could not run
	committed *committed
	repeat    transport.Answer
	inFlight  int // in-flight answers before the repeat's last
}

func cell(v verdict.Verdict, format string, args ...any) Cell {
	return Cell{Verdict: v, Evidence: fmt.Sprintf(format, args...)}
}

// judgeReplay judges "replays after a lost answer": a keyed repeat must get the first
// call's result without executing again; a plain repeat (no key) is judged on whether it
// executed again.
func judgeReplay(o lostAnswer, by evidenceBy, kind Kind) (Cell, executions) {
	what := "the repeat"
	if o.keyed {
		what = "the repeat with the same key"
	}
	c := o.committed
	switch {
	case o.err != "":
		return cell(verdict.Unknown, "could not probe: %s", o.err), execUnknown
	case c == nil || !c.reached:
		return cell(verdict.Unknown, "the first call never reached the server: nothing committed to lose"), execUnknown
	case !c.faulted:
		return cell(verdict.Unknown, "the proxy did not lose the first answer (%s): nothing to recover", orText(c.note, "no fault applied")), execUnknown
	case c.class != outcome.Success:
		return cell(verdict.Unknown, "the first call was answered %s by the server, not a success: nothing committed to replay", describeStatus(kind, c.status, c.body)), execUnknown
	}
	r := o.repeat
	switch {
	case r.Class == outcome.Info:
		return cell(verdict.Unknown, "%s was not answered (%s)", what, r.Err), execUnknown
	case r.Class != outcome.Success && o.inFlight > 0 && looksInFlight(kind, r):
		return cell(verdict.Unknown, "%s was still answered in flight after %d tries (%s)", what, o.inFlight+1, describe(kind, r)), execUnknown
	case r.Class != outcome.Success && o.keyed:
		return cell(verdict.Fail, "%s was refused with %s after the lost answer committed: an agent that retries never gets its result", what, describe(kind, r)), execUnknown
	case r.Class != outcome.Success:
		return cell(verdict.Unknown, "%s was refused with %s: not executed again by its own account, but without a ledger the one execution cannot be shown", what, describe(kind, r)), execUnknown
	}
	if l := by.ledger; l != nil && l.err == "" {
		if l.n == 1 && by.field != "" && c.body != nil {
			// One execution; the repeat must still be told its result, not another.
			lost, okLost := valueAt(c.body, by.field)
			got, okGot := valueAt(r.Body, by.field)
			if okLost && (!okGot || lost != got) {
				return cell(verdict.Fail, "one execution (the ledger, %s, counted 1), but %s was not answered with its result: the lost answer had %s %s, %s %s (made up, or re-rendered)",
					l.what, what, showPath(by.field), showValue(lost), what, shownOrNone(got, okGot)), execOnce
			}
		}
		switch {
		case l.n == 1:
			return cell(verdict.Pass, "one execution: the ledger (%s) counted 1 after the lost answer and %s", l.what, what), execOnce
		case l.n > 1:
			return cell(verdict.Fail, "executed %d times: the ledger (%s) counted %d after the lost answer and %s", l.n, l.what, l.n, what), execTwice
		}
		return cell(verdict.Unknown, "the ledger (%s) counted %d after a committed call and %s: it does not see this operation's executions", l.what, l.n, what), execUnknown
	}
	if by.field != "" && c.body != nil {
		lost, okLost := valueAt(c.body, by.field)
		got, okGot := valueAt(r.Body, by.field)
		switch {
		case okLost && okGot && lost == got:
			return cell(verdict.Pass, "replayed: %s got %s %s, the lost answer's", what, showPath(by.field), showValue(got)), execOnce
		case okLost && okGot:
			return cell(verdict.Fail, "executed twice: the lost answer had %s %s, %s %s", showPath(by.field), showValue(lost), what, showValue(got)), execTwice
		}
		return cell(verdict.Unknown, "%s missing from %s", showPath(by.field), map[bool]string{true: "the repeat's answer", false: "the lost answer"}[okLost]), execUnknown
	}
	seen := what + " succeeded"
	if c.body != nil && sameJSON(c.body, r.Body) {
		seen += " with the lost answer's body"
	}
	return cell(verdict.Unknown, "%s", by.unknownWhy(seen)), execUnknown
}

// changedRequest is what the changed-request probe saw: the original call, the same key
// with one argument changed, and — when that was refused — the changed arguments under a
// fresh key (the control: was the change itself acceptable?).
type changedRequest struct {
	err      string
	what     string // "amount 4900 → 4901"
	original transport.Answer
	changed  transport.Answer
	control  *transport.Answer
}

// judgeChanged judges "refuses a changed request": the same key with other arguments must
// be refused, not answered with the original's result or executed.
func judgeChanged(o changedRequest, by evidenceBy, kind Kind) Cell {
	switch {
	case o.err != "":
		return cell(verdict.Unknown, "could not probe: %s", o.err)
	case o.original.Class != outcome.Success:
		return cell(verdict.Unknown, "the original call got %s, not a success: nothing for a changed request to meet", describe(kind, o.original))
	case o.changed.Class == outcome.Info:
		return cell(verdict.Unknown, "the changed request (%s) was not answered (%s)", o.what, o.changed.Err)
	case o.changed.Class == outcome.Success:
		detail := "answered with a success"
		if by.field != "" {
			a, okA := valueAt(o.original.Body, by.field)
			b, okB := valueAt(o.changed.Body, by.field)
			switch {
			case okA && okB && a == b:
				detail = fmt.Sprintf("answered with the original's result (%s %s)", showPath(by.field), showValue(a))
			case okA && okB:
				detail = fmt.Sprintf("executed under the reused key (%s %s, then %s)", showPath(by.field), showValue(a), showValue(b))
			}
		}
		return cell(verdict.Fail, "the same key with %s was %s, not refused", o.what, detail)
	case o.control == nil:
		return cell(verdict.Unknown, "the changed request (%s) was refused with %s, and no control was sent", o.what, describe(kind, o.changed))
	case o.control.Class == outcome.Success:
		return cell(verdict.Pass, "refused: the same key with %s got %s, while the changed arguments under a fresh key executed", o.what, describe(kind, o.changed))
	}
	return cell(verdict.Unknown, "the same key with %s was refused with %s, but the changed arguments were refused under a fresh key too (%s): the change itself may be invalid; name the argument to change in --args (change:)",
		o.what, describe(kind, o.changed), describe(kind, *o.control))
}

// concurrent is what the concurrency probe saw: two copies of one call with one key at
// once, and the retry of a copy that was refused or not answered.
type concurrent struct {
	err   string
	a, b  transport.Answer
	retry *transport.Answer // the retry of the copy that did not succeed
	// met: the copies were at the server at once (the journal), or one was refused as
	// in flight; tries is how many pairs were sent to get there.
	met   bool
	tries int
}

// judgeConcurrent judges "one of two concurrent copies": two copies with one key at once
// must make one execution.
func judgeConcurrent(o concurrent, by evidenceBy, kind Kind) Cell {
	if o.err != "" {
		return cell(verdict.Unknown, "could not probe: %s", o.err)
	}
	a, b := o.a, o.b
	if b.Class == outcome.Success && a.Class != outcome.Success {
		a, b = b, a
	}
	if a.Class != outcome.Success {
		return cell(verdict.Unknown, "neither copy succeeded: %s and %s", describe(kind, a), describe(kind, b))
	}
	second := b
	how := "the other copy"
	if b.Class != outcome.Success {
		if o.retry == nil {
			return cell(verdict.Unknown, "one copy succeeded, the other got %s, and was not retried", describe(kind, b))
		}
		if o.retry.Class != outcome.Success {
			return cell(verdict.Unknown, "one copy succeeded; the other got %s, and its retry %s: whether it executed cannot be seen", describe(kind, b), describe(kind, *o.retry))
		}
		second, how = *o.retry, fmt.Sprintf("the other copy got %s; its retry", describe(kind, b))
	}
	unmet := func(what string) Cell {
		return cell(verdict.Unknown, "%s, but the two copies never met at the server (%d %s sent): each was answered before the other reached it, so nothing concurrent was tested", what, o.tries, plural(o.tries, "pair", "pairs"))
	}
	if l := by.ledger; l != nil && l.err == "" {
		if l.n == 1 && by.field != "" {
			// One execution, and both copies told of a success: both must carry its
			// per-execution value, one answered with something else was not its result.
			x, okX := valueAt(a.Body, by.field)
			y, okY := valueAt(second.Body, by.field)
			if okX != okY || (okX && x != y) {
				return cell(verdict.Fail, "one execution (the ledger, %s, counted 1), but the two copies were answered different successes: %s %s and %s — %s was not that execution's result (made up, or re-rendered)",
					l.what, showPath(by.field), shownOrNone(x, okX), shownOrNone(y, okY), how)
			}
		}
		switch {
		case l.n == 1 && !o.met:
			return unmet(fmt.Sprintf("one execution (the ledger, %s, counted 1)", l.what))
		case l.n == 1:
			return cell(verdict.Pass, "one execution: the ledger (%s) counted 1 for two copies at once", l.what)
		case l.n > 1:
			return cell(verdict.Fail, "%d executions for one key: the ledger (%s) counted %d for two copies at once", l.n, l.what, l.n)
		}
		return cell(verdict.Unknown, "the ledger (%s) counted %d for two copies that succeeded: it does not see this operation's executions", l.what, l.n)
	}
	if by.field != "" {
		x, okX := valueAt(a.Body, by.field)
		y, okY := valueAt(second.Body, by.field)
		switch {
		case okX && okY && x == y && !o.met:
			return unmet(fmt.Sprintf("one execution (%s got %s %s, the first copy's)", how, showPath(by.field), showValue(y)))
		case okX && okY && x == y:
			return cell(verdict.Pass, "one execution: %s got %s %s, the first copy's", how, showPath(by.field), showValue(y))
		case okX && okY:
			return cell(verdict.Fail, "two executions for one key: %s %s and %s", showPath(by.field), showValue(x), showValue(y))
		}
		return cell(verdict.Unknown, "%s missing from a copy's answer", showPath(by.field))
	}
	return cell(verdict.Unknown, "%s", by.unknownWhy("both copies succeeded"))
}

// shownOrNone shows a per-execution value, or says the answer had none.
func shownOrNone(v string, ok bool) string {
	if !ok {
		return "none"
	}
	return showValue(v)
}

// judgeKey judges "takes a key": where the operation takes one, or, when it takes none,
// whether a plain repeat showed it needs one.
func judgeKey(op *Operation, replay executions) Cell {
	switch {
	case op.Key != nil:
		return cell(verdict.Pass, "%s (%s)", op.Key, op.Key.Why)
	case replay == execTwice:
		return cell(verdict.Fail, "takes no key, and a repeat after a lost answer executed again: it needs one")
	}
	return cell(verdict.NA, "takes no key: %s", noKeyText(op))
}

func noKeyText(op *Operation) string {
	if op.Method != "" {
		return "no header parameter or body property names one"
	}
	return "no argument, _meta field or description names one, and the server does not advertise tools.idempotency"
}

// judgeAnnotation judges "annotation honest": an operation that declares itself
// idempotent (idempotentHint, or PUT/DELETE) must not execute twice on a repeat; a
// read-only tool must leave the ledger unchanged.
func judgeAnnotation(op *Operation, replay Cell, execs executions, readOnlyCount *counted) Cell {
	switch {
	case op.ReadOnly && readOnlyCount != nil && readOnlyCount.err == "" && readOnlyCount.n == 0:
		return cell(verdict.Pass, "readOnlyHint holds: the ledger (%s) counted no effect of its calls", readOnlyCount.what)
	case op.ReadOnly && readOnlyCount != nil && readOnlyCount.err == "":
		return cell(verdict.Fail, "declares readOnlyHint: true, yet the ledger (%s) counted %d effect(s) of its calls", readOnlyCount.what, readOnlyCount.n)
	case op.ReadOnly:
		return cell(verdict.Unknown, "readOnlyHint: true cannot be checked without a ledger (declare one in --args)")
	case op.IdempotentClaim == "":
		return cell(verdict.NA, "makes no idempotency claim (%s)", noClaimText(op))
	case execs == execTwice:
		return cell(verdict.Fail, "declares %s, and %s", op.IdempotentClaim, lowerFirst(replay.Evidence))
	case execs == execOnce && replay.Verdict == verdict.Fail:
		// The claim is about effects, and there was one; what the repeat was told is the
		// replay column's finding.
		return cell(verdict.Pass, "declares %s, and one execution after the lost answer and its repeat (what the repeat was answered: see replays after a lost answer)", op.IdempotentClaim)
	case execs == execOnce:
		return cell(verdict.Pass, "declares %s, and %s", op.IdempotentClaim, lowerFirst(replay.Evidence))
	}
	return cell(verdict.Unknown, "declares %s; whether it holds cannot be told: %s", op.IdempotentClaim, lowerFirst(replay.Evidence))
}

func noClaimText(op *Operation) string {
	if op.Method != "" {
		return op.Method + " is not idempotent by its method"
	}
	return "no idempotentHint"
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

func orText(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

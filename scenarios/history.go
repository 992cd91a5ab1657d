package scenarios

import (
	"bytes"
	"fmt"
	"strconv"
	"time"
)

// Ledger names in Record.Ledger.
const (
	LedgerOperation = "operation"       // side_effects of the operation, for the run's entity
	LedgerOther     = "other_operation" // other_operation.side_effects
)

// answers returns the completion events (ok / fail / info) of a step, in history order.
func (r Record) answers(step string) []Op {
	var out []Op
	for _, op := range r.History {
		if op.Step == step && op.Type != OpInvoke {
			out = append(out, op)
		}
	}
	return out
}

// answer returns the last completion event of a step.
func (r Record) answer(step string) (Op, bool) {
	a := r.answers(step)
	if len(a) == 0 {
		return Op{}, false
	}
	return a[len(a)-1], true
}

// invokedAt returns when the step's first attempt was invoked.
func (r Record) invokedAt(step string) (time.Time, bool) {
	for _, op := range r.History {
		if op.Step == step && op.Type == OpInvoke {
			return op.Time, true
		}
	}
	return time.Time{}, false
}

// firstSuccess is the first 2xx any step got: the committed response as the client saw it.
func (r Record) firstSuccess() (Op, bool) {
	for _, op := range r.History {
		if op.Type == OpOK {
			return op, true
		}
	}
	return Op{}, false
}

// committedBody is the body the upstream produced when it committed, from the journal
// (the proxy buffers it when an after-upstream fault hid it from the client).
func (r Record) committedBody() ([]byte, int, bool) {
	for _, j := range r.Journal {
		if j.ReachedUpstream && is2xx(j.UpstreamStatus) && len(j.UpstreamBody) > 0 {
			return j.UpstreamBody, j.UpstreamStatus, true
		}
	}
	return nil, 0, false
}

// upstreamCalls counts the requests the upstream received, per the journal.
func (r Record) upstreamCalls() int {
	n := 0
	for _, j := range r.Journal {
		n += j.UpstreamCalls
	}
	return n
}

// allowedEffects is how many side effects one key may legitimately have produced: the
// number of retention windows its attempts may have reached the target in. The first
// attempt opens a window (the target counts from the key's first record, which is no
// earlier than that attempt's start); an attempt that was still unanswered when the
// window ran out may have arrived after it, may execute anew, and opens the next window
// at its own start. The count errs on the lenient side: a loaded machine never turns a
// late attempt into a false duplicate. Without a declared retention, one.
func allowedEffects(r Record, p *Profile) int {
	if p.Retention == 0 {
		return 1
	}
	type attemptID struct {
		step            string
		client, attempt int
	}
	answered := map[attemptID]time.Time{}
	for _, op := range r.History {
		if op.Type != OpInvoke {
			answered[attemptID{op.Step, op.Client, op.Attempt}] = op.Time
		}
	}
	var start time.Time
	n := 0
	for _, op := range r.History {
		if op.Type != OpInvoke {
			continue
		}
		end, ok := answered[attemptID{op.Step, op.Client, op.Attempt}]
		if !ok {
			end = op.Time
		}
		if n == 0 || end.After(start.Add(p.Retention.Std())) {
			n++
			start = op.Time
		}
	}
	return max(n, 1)
}

func is2xx(s int) bool { return s >= 200 && s <= 299 }

func describe(op Op) string {
	if op.Status != 0 {
		return strconv.Itoa(op.Status)
	}
	if op.Error != "" {
		return string(op.Type) + " (" + op.Error + ")"
	}
	return string(op.Type)
}

func sameBody(a, b []byte) bool { return bytes.Equal(a, b) }

func replayMarked(op Op, p *Profile) bool {
	if p.Expect.ReplayHeader == "" {
		return false
	}
	_, ok := op.Headers[p.Expect.ReplayHeader]
	return ok
}

func clip(b []byte) string {
	const max = 120
	if len(b) > max {
		return fmt.Sprintf("%q…", b[:max])
	}
	return fmt.Sprintf("%q", b)
}

func itoa(n int) string { return strconv.Itoa(n) }

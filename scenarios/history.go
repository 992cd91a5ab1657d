package scenarios

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/internal/bodytext"
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/transport"
	"github.com/idemproof/idemproof/verdict"
)

// stepAnswers returns the completion events (ok / fail / info) of a step, in history order.
func stepAnswers(r verdict.Record, step string) []verdict.Op {
	var out []verdict.Op
	for _, op := range r.History {
		if op.Step == step && op.Type != verdict.OpInvoke {
			out = append(out, op)
		}
	}
	return out
}

// stepAnswer returns the last completion event of a step.
func stepAnswer(r verdict.Record, step string) (verdict.Op, bool) {
	a := stepAnswers(r, step)
	if len(a) == 0 {
		return verdict.Op{}, false
	}
	return a[len(a)-1], true
}

// stepInvokedAt returns when the step's first attempt was invoked.
func stepInvokedAt(r verdict.Record, step string) (time.Time, bool) {
	for _, op := range r.History {
		if op.Step == step && op.Type == verdict.OpInvoke {
			return op.Time, true
		}
	}
	return time.Time{}, false
}

// lastInvokedAt is when the step's last attempt was invoked.
func lastInvokedAt(r verdict.Record, step string) (time.Time, bool) {
	for i := len(r.History) - 1; i >= 0; i-- {
		if op := r.History[i]; op.Step == step && op.Type == verdict.OpInvoke {
			return op.Time, true
		}
	}
	return time.Time{}, false
}

// committedBody is the body the upstream produced when it committed, from the journal
// (the proxy buffers it when an after-upstream fault hid it from the client), when the
// profile's rules call that answer a success.
func committedBody(r verdict.Record, p *profile.Profile) ([]byte, int, bool) {
	cl := p.Classifier()
	for _, j := range r.Journal {
		if j.ReachedUpstream && len(j.UpstreamBody) > 0 && cl.Classify(outcome.Answer{Status: j.UpstreamStatus, Body: j.UpstreamBody}) == outcome.Success {
			return j.UpstreamBody, j.UpstreamStatus, true
		}
	}
	return nil, 0, false
}

// givenUpWhileRunning counts the attempts that reached the target but whose client left
// before the target answered (a client timeout, not a target that failed the request):
// the target may still be working on them, however long that takes. An attempt a
// pre-commit delay forwarded only after its client's timeout had passed (so its client
// had given up), whose work at the target was still running when a later attempt of its
// key arrived, counts too: that attempt met it in flight (over stdio the late answer is
// still written to the pipe, so the journal cannot tell that its client had left).
// Attempts that merely overlapped, as a burst's do, or a repeat delayed into the
// original's hold, are not counted: their clients waited for them.
func givenUpWhileRunning(r verdict.Record, p *profile.Profile) int {
	n := 0
	for i, j := range r.Journal {
		if j.ReachedUpstream && j.UpstreamStatus == 0 && j.ClientResult == faultproxy.ClientTimedOut {
			n++
		} else if j.Fault == faultproxy.FaultBeforeDelay && j.ReachedUpstream &&
			millisDuration(j.ForwardedAfterMillis) >= p.ClientTimeout.Std() && workedPastALaterArrival(r.Journal, i) {
			n++
		} else if j.Fault != "" && strings.Contains(j.Note, NoteAnswerWithoutResponse) {
			// The upstream's answer ended before the result (an MCP stream closed to be
			// polled) and the fault took the rest of it away: the work may still run.
			n++
		}
	}
	return n
}

// workedPastALaterArrival reports whether journal[i]'s work at the target ended after a
// later attempt of the same key reached the proxy.
func workedPastALaterArrival(journal []faultproxy.Record, i int) bool {
	j := journal[i]
	ended := j.Time.Add(millisDuration(j.ForwardedAfterMillis + j.UpstreamMillis))
	for _, later := range journal[i+1:] {
		if later.Key == j.Key && later.Time.After(j.Time) && later.Time.Before(ended) {
			return true
		}
	}
	return false
}

// NoteAnswerWithoutResponse marks a faulted journal record whose upstream answer ended
// without the JSON-RPC response (an event stream the server closed to be polled): the
// tool may still have been running when the fault hid the rest of the answer.
const NoteAnswerWithoutResponse = "the upstream's answer held no response yet (an event stream the server closed to be polled): the tool may still have been running"

// stoppedBefore counts the attempts a proxy fault stopped before the target.
func stoppedBefore(r verdict.Record) int {
	n := 0
	for _, j := range r.Journal {
		if j.Fault != "" && !j.ReachedUpstream {
			n++
		}
	}
	return n
}

// faultNeverApplied reports whether the scenario injects proxy faults and the journal
// shows none applied to any attempt: the failure the scenario is about did not happen,
// so whatever the checker saw proves nothing about it. It names the faults it missed.
func faultNeverApplied(sc Scenario, r verdict.Record) (string, bool) {
	if len(sc.Faults) == 0 {
		return "", false
	}
	for _, j := range r.Journal {
		if j.Fault != "" && (!actsOnTheAnswer(j.Fault) || j.UpstreamStatus != 0) {
			return "", false
		}
	}
	types := make([]string, 0, len(sc.Faults))
	for _, fo := range sc.Faults {
		if t := string(fo.Fault.Type); !slices.Contains(types, t) {
			types = append(types, t)
		}
	}
	return strings.Join(types, ", "), true
}

// actsOnTheAnswer reports whether a fault acts on the upstream's answer: it was applied
// only where the upstream gave one (a client that left first never let it act).
func actsOnTheAnswer(fault string) bool { return strings.HasPrefix(fault, "after-") }

// withPremise turns a PASS into UNKNOWN when the scenario's fault was applied to no
// attempt: no PASS without the failure it is about, so a rule that matched nothing (a
// key the proxy did not see, a fault of the harness) never reads as a proof. Other
// verdicts stand: what the checker saw still happened. A scenario whose first step (the
// original) a rate limit refused is UNKNOWN whatever the checker said, unless it FAILed
// on duplicates (counted from the ledger, not from the original).
//
// Over MCP, a PASS is UNKNOWN too when a fault lost a 404 of the transport: the session
// was gone, so no tool saw that attempt, and the attempt the scenario means to lose (a
// replay, the original) never happened; the client, which never saw the 404, could not
// open a new session for it. So is one whose duplicated copy met that 404: no duplicate
// reached the tool.
func withPremise(sc Scenario, r verdict.Record, p *profile.Profile, v verdict.Verdict, msg string, ev verdict.Evidence) (verdict.Verdict, string) {
	duplicateFail := ev.Categories[verdict.CatDuplicated] > 0
	if first, answer, throttled := firstStepThrottled(sc, r); throttled && (v == verdict.Pass || v == verdict.Fail) && !(v == verdict.Fail && duplicateFail) {
		// The step the others are measured against never reached the target's logic: a
		// repeat "during the original" met nothing, a takeover took over nothing, so a
		// PASS proves nothing and a FAIL (a repeat "answered during the original") may be
		// the first execution.
		return verdict.Unknown, fmt.Sprintf("the %s step was throttled (%s): what the scenario is about did not happen; the checker saw: %s", first, describe(answer), msg)
	}
	if v == verdict.Pass && p.Transport == profile.TransportMCP {
		for _, j := range r.Journal {
			switch {
			case j.UpstreamStatus != http.StatusNotFound:
			case actsOnTheAnswer(j.Fault):
				return verdict.Unknown, fmt.Sprintf("the %s fault lost the server's 404 to attempt %d (its MCP session was gone: no tool saw it), not an answer of the tool: what the scenario is about did not happen; the checker saw: %s", j.Fault, j.Attempt, msg)
			case j.Fault == faultproxy.FaultDuplicate:
				// The copy delivered to the client is the second: a 404 there is a copy no
				// tool saw, so nothing was deduplicated.
				return verdict.Unknown, fmt.Sprintf("the duplicated copy of attempt %d met the server's 404 (its MCP session was gone: no tool saw it), so no duplicate reached the tool: what the scenario is about did not happen; the checker saw: %s", j.Attempt, msg)
			}
		}
	}
	faults, missed := faultNeverApplied(sc, r)
	if !missed || v != verdict.Pass {
		return v, msg
	}
	return verdict.Unknown, fmt.Sprintf("the scenario's fault (%s) was applied to no attempt (%d in the proxy's journal): what it is about did not happen; the checker saw: %s", faults, len(r.Journal), msg)
}

// firstStepThrottled reports whether every answer of the scenario's first step (a single
// request: the original the later steps meet, retry or take over) was a rate limit's
// refusal. A first step of many copies or keys (a burst, a key set) is judged by its
// checker, which counts the throttled attempts out.
func firstStepThrottled(sc Scenario, r verdict.Record) (string, verdict.Op, bool) {
	if len(sc.Steps) < 2 {
		return "", verdict.Op{}, false
	}
	st := sc.Steps[0]
	if st.Copies > 1 || st.KeySet != "" || st.FreshKeys > 0 {
		return "", verdict.Op{}, false
	}
	answers := stepAnswers(r, st.Name)
	if len(answers) == 0 {
		return "", verdict.Op{}, false
	}
	for _, a := range answers {
		if a.Class != outcome.Throttled {
			return "", verdict.Op{}, false
		}
	}
	return st.Name, answers[len(answers)-1], true
}

// upstreamCalls counts the requests the upstream received, per the journal.
func upstreamCalls(r verdict.Record) int {
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
func allowedEffects(r verdict.Record, p *profile.Profile) int {
	if p.Retention == 0 {
		return 1
	}
	type attemptID struct {
		step            string
		client, attempt int
	}
	answered := map[attemptID]time.Time{}
	for _, op := range r.History {
		if op.Type != verdict.OpInvoke {
			answered[attemptID{op.Step, op.Client, op.Attempt}] = op.Time
		}
	}
	var start time.Time
	n := 0
	for _, op := range r.History {
		if op.Type != verdict.OpInvoke {
			continue
		}
		end, ok := answered[attemptID{op.Step, op.Client, op.Attempt}]
		if !ok {
			end = op.Time
		}
		if n == 0 || pastRetention(p, start, end) {
			n++
			start = op.Time
		}
	}
	return max(n, 1)
}

// pastRetention reports whether an attempt answered at end may have reached the target
// after the declared retention of a key first sent at start: the target counts from the
// key's first record, which is no earlier than start, and the attempt arrived no later
// than its answer. Such an attempt may execute anew, with a response of its own. Lenient
// on purpose, like allowedEffects: a loaded machine never turns a late repeat into a
// false violation. Without a declared retention, never.
func pastRetention(p *profile.Profile, start, end time.Time) bool {
	return p.Retention > 0 && end.Sub(start) > p.Retention.Std()
}

// mayBeLate says why an answer of what is not judged: it may have come from an attempt
// that reached the target after the declared retention (pastRetention).
func mayBeLate(what string, p *profile.Profile) string {
	return fmt.Sprintf("%s may have reached the target after the declared %s retention, where a new execution is allowed", what, p.Retention)
}

func is2xx(s int) bool { return s >= 200 && s <= 299 }

// isSuccess reports whether the client saw the answer whole and it is the operation's
// result (executed or replayed).
func isSuccess(op verdict.Op) bool { return op.Class == outcome.Success }

// unseen reports whether the client could not see the outcome (Jepsen info): the attempt
// may or may not have taken effect, so it proves nothing either way.
func unseen(op verdict.Op) bool { return !op.Class.Determinate() }

// sameResponse reports whether two answers are the same response: the same status
// (Profile.sameStatus) and the same body (Profile.sameBody).
func sameResponse(p *profile.Profile, a, b verdict.Op) bool {
	return sameStatus(p, a.Status, b.Status) && sameBody(p, a.Body, b.Body)
}

// sameStatus reports whether two statuses are those of one response: equal, or two
// successes one of which is the declared expect.replay_status (a replay may answer with
// it, whichever came first: the execution's status is not always the one compared).
func sameStatus(p *profile.Profile, a, b int) bool {
	if a == b {
		return true
	}
	rs := p.Expect.ReplayStatus
	return rs != 0 && is2xx(a) && is2xx(b) && (a == rs || b == rs)
}

// describeUnseen names the attempts nobody saw the outcome of, for evidence: "37 attempts
// timed out (info)", or with the causes when they differ.
func describeUnseen(ops []verdict.Op) string {
	causes := map[string]int{}
	var order []string
	n := 0
	for _, op := range ops {
		if !unseen(op) {
			continue
		}
		n++
		c := op.Error
		switch {
		case op.Class == outcome.Throttled:
			c = "throttled (" + strconv.Itoa(op.Status) + ")"
		case c == "":
			c = "no answer"
		}
		if causes[c] == 0 {
			order = append(order, c)
		}
		causes[c]++
	}
	if n == 0 {
		return ""
	}
	noun := "attempts"
	if n == 1 {
		noun = "attempt"
	}
	if len(order) == 1 && order[0] == transport.TimedOut {
		return fmt.Sprintf("%d %s timed out (info)", n, noun)
	}
	parts := make([]string, len(order))
	for i, c := range order {
		parts[i] = fmt.Sprintf("%d %s", causes[c], c)
	}
	return fmt.Sprintf("%d %s unseen (info: %s)", n, noun, strings.Join(parts, ", "))
}

// uniqueValue reads the profile's expect.unique_field from a body ("" when not declared
// or absent): a value minted per execution.
func uniqueValue(p *profile.Profile, body []byte) (string, bool) {
	if p.Expect.UniqueField == "" {
		return "", false
	}
	v := gjson.GetBytes(body, p.Expect.UniqueField)
	if !v.Exists() {
		return "", false
	}
	return v.Raw, true
}

func describe(op verdict.Op) string {
	if op.Status != 0 {
		if op.Class != "" && op.Class != outcome.Success {
			return strconv.Itoa(op.Status) + " (" + string(op.Class) + ")"
		}
		return strconv.Itoa(op.Status)
	}
	if op.Error != "" {
		return string(op.Type) + " (" + op.Error + ")"
	}
	return string(op.Type)
}

// describeRefusal is describe for an answer to a request the scenario expects refused
// as one of fits: a class among them is named as such, "400 (invalid_key)"; another is
// said to be how the profile classed the status, "400 (classed as missing_key)" — a
// too-long key refused with the status declared for a missing key is not a missing key.
func describeRefusal(op verdict.Op, fits ...outcome.Class) string {
	if op.Status == 0 || op.Class == "" || op.Class == outcome.Success || slices.Contains(fits, op.Class) {
		return describe(op)
	}
	return strconv.Itoa(op.Status) + " (classed as " + string(op.Class) + ")"
}

func replayMarked(op verdict.Op, p *profile.Profile) bool {
	if p.Expect.ReplayHeader == "" {
		return false
	}
	v, ok := op.Headers[p.Expect.ReplayHeader]
	return ok && !negativeMarker(v)
}

// negativeMarker reports whether a replay header's value says "not a replay": many
// servers send the header on every response, `Idempotent-Replayed: false` on a fresh
// execution (RFC 8941 booleans: ?1 and ?0).
func negativeMarker(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "false", "0", "?0", "no", "off":
		return true
	}
	return false
}

// clip shows a body in an example line: JSON as compact JSON text, anything else as
// text, never Go-quoted; cut after 160 bytes.
func clip(b []byte) string { return bodytext.Line(b, 160) }

// quoteKey shows a key Go-quoted (keys are sent with control characters on purpose),
// cut after 60 bytes.
func quoteKey(k string) string {
	if len(k) > 60 {
		return fmt.Sprintf("%q…", k[:60])
	}
	return fmt.Sprintf("%q", k)
}

func itoa(n int) string { return strconv.Itoa(n) }

// sameUnique reports whether the profile's per-execution field is present and equal in
// both bodies: the same execution's response.
func sameUnique(p *profile.Profile, a, b verdict.Op) bool {
	ua, okA := uniqueValue(p, a.Body)
	ub, okB := uniqueValue(p, b.Body)
	return okA && okB && ua == ub
}

// wantText names an expected answer for a blamed attempt: "422 (mismatch)", or the
// class alone when no status is declared.
func wantText(status int, c outcome.Class) string {
	if status == 0 {
		return string(c)
	}
	return itoa(status) + " (" + string(c) + ")"
}

package scenarios

import (
	"fmt"
	"time"

	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/verdict"
)

// settleResult is what the settle step showed, for the checkers.
type settleResult struct {
	ran   bool       // the record has a settle step
	last  verdict.Op // its last answer
	tries int
	// pastWindow: the settle step may have reached the target after the declared
	// retention since the first attempt (it was still unanswered when the window ran
	// out), where a new execution (another response) is allowed.
	pastWindow bool
	spent      time.Duration // from its first invoke to its last answer
	window     time.Duration // the settle window it ran under (settleWindowAfter)
	lastTook   time.Duration // its last try's round trip
	gaveUp     int           // attempts before it the client gave up on unanswered
}

// settledOf reads the settle step of the record.
func settledOf(r verdict.Record, p *profile.Profile) settleResult {
	answers := stepAnswers(r, SettleStep)
	if len(answers) == 0 {
		return settleResult{}
	}
	s := settleResult{ran: true, last: answers[len(answers)-1], tries: len(answers)}
	first, _ := stepInvokedAt(r, SettleStep)
	s.spent = s.last.Time.Sub(first)
	s.window = settleWindowAfter(p, r.History)
	s.gaveUp = gaveUpUnanswered(r.History)
	if at, ok := lastInvokedAt(r, SettleStep); ok {
		s.lastTook = s.last.Time.Sub(at)
	}
	if start, ok := firstInvoke(r); ok && p.Retention > 0 {
		s.pastWindow = s.last.Time.After(start.Add(p.Retention.Std()))
	}
	return s
}

// firstInvoke is when the scenario's first attempt was invoked.
func firstInvoke(r verdict.Record) (time.Time, bool) {
	for _, op := range r.History {
		if op.Type == verdict.OpInvoke {
			return op.Time, true
		}
	}
	return time.Time{}, false
}

// judgeSettle judges the settle step against the committed responses the scenario saw
// (wants; empty when no attempt saw one, and then any success is accepted here and the
// caller judges it against the ledger). exact compares status and body bytes; otherwise
// only the class and the status. It returns decided=true with the verdict when the settle
// step decides the scenario: the key still refused as in flight after every attempt
// ended and the settle window passed (FAIL, stuck); a success where only refusals were
// committed (FAIL, fabricated); another answer than the committed one (FAIL, diverged);
// no answer seen at all (UNKNOWN: a hanging key and a loaded machine look alike).
func judgeSettle(r verdict.Record, p *profile.Profile, f *finding, wants []verdict.Op, exact bool) (s settleResult, v verdict.Verdict, msg string, decided bool) {
	s = settledOf(r, p)
	if !s.ran {
		return s, "", "", false
	}
	got := s.last
	fail := func(cat, format string, args ...any) (settleResult, verdict.Verdict, string, bool) {
		f.count(cat, 1)
		v, m, _ := f.result(verdict.Fail, format, args...)
		return s, v, m, true
	}
	switch {
	case got.Class == outcome.InFlight && !anyClass(wants, outcome.InFlight) && s.spent < s.window:
		// The settle step ended before the window passed (the run was cut short): the
		// key may still have been legitimately held.
		v, m, _ := f.result(verdict.Unknown, "the settle retry still got %s %s into the %s settle window: the key may still have been legitimately held", describe(got), s.spent.Round(time.Millisecond), s.window)
		return s, v, m, true
	case got.Class == outcome.InFlight && !anyClass(wants, outcome.InFlight) && s.gaveUp > 0 && s.lastTook >= settleWindowOf(p):
		// The target took longer to refuse the settle's last try than a lock may be held:
		// it was still busy, with the attempts its clients left among what it worked on.
		v, m, _ := f.result(verdict.Unknown, "the settle retry still got %s after %s (%d tries), but the target took %s to answer its last try while %d attempt(s) the client gave up on may still have been queued there: a busy target, not proven a stuck key", describe(got), s.spent.Round(time.Millisecond), s.tries, s.lastTook.Round(time.Millisecond), s.gaveUp)
		return s, v, m, true
	case got.Class == outcome.InFlight && !anyClass(wants, outcome.InFlight) && p.LockTimeout.Std() == 0 && givenUpWhileRunning(r, p) > 0:
		// The client left an attempt the target had not answered yet, and no lock_timeout
		// bounds how long the target may still work on it: still in flight is no proof of
		// a stuck key.
		v, m, _ := f.result(verdict.Unknown, "the settle retry still got %s after %s (%d tries), but %d attempt(s) were given up by the client before the target answered them, and no lock_timeout is declared to bound how long it may still be working: declare lock_timeout to judge a stuck key", describe(got), s.spent.Round(time.Millisecond), s.tries, givenUpWhileRunning(r, p))
		return s, v, m, true
	case got.Class == outcome.InFlight && !anyClass(wants, outcome.InFlight):
		f.example("settle: %d tries over %s, the last got %s", s.tries, s.spent.Round(time.Millisecond), describe(got))
		f.blame(got, "the committed response")
		return fail(verdict.CatStuck, "the key is stuck: the settle retry got %s after every attempt ended (%d tries over %s)", describe(got), s.tries, s.spent.Round(time.Millisecond))
	case unseen(got):
		// A key that hangs and a machine too loaded to answer look the same from here:
		// an unseen answer is never a FAIL by itself, and never a pass.
		v, m, _ := f.result(verdict.Unknown, "the settle retry got no answer after every attempt ended (%s): the key may hang, or the target is too slow to tell", describeUnseen(stepAnswers(r, SettleStep)))
		return s, v, m, true
	case len(wants) == 0 || s.pastWindow:
		return s, "", "", false
	}
	for _, w := range wants {
		if got.Class == w.Class && sameStatus(p, got.Status, w.Status) && (!exact || sameBody(p, got.Body, w.Body)) {
			return s, "", "", false
		}
	}
	w := wants[0]
	f.example("committed: %d %s", w.Status, clip(w.Body))
	f.example("settle:    %d %s", got.Status, clip(got.Body))
	f.blameAgainst(got, "the committed "+describe(w), &w)
	if isSuccess(got) && !anyClass(wants, outcome.Success) {
		return fail(verdict.CatFabricated, "the settle retry got %d, a success, where the committed answer is %s", got.Status, describe(w))
	}
	return fail(verdict.CatDiverged, "the settle retry got %s%s, which differs from the committed %s", describe(got), uniqueNote(p, w, got), describe(w))
}

// uniqueNote says, when the profile declares a per-execution field, whether two bodies
// carry the same one.
func uniqueNote(p *profile.Profile, a, b verdict.Op) string {
	if note := statusOnlyNote(p, a, b, "the committed", true); note != "" {
		return note
	}
	ua, okA := uniqueValue(p, a.Body)
	ub, okB := uniqueValue(p, b.Body)
	changed := changedMembers(a.Body, b.Body)
	switch {
	case (!okA || !okB) && changed != "":
		return " (" + changed + volatileHint + ")"
	case !okA || !okB:
		return ""
	case ua == ub && changed != "":
		return " (same " + p.Expect.UniqueField + " " + ua + ": the replay was altered, " + changed + volatileHint + ")"
	case ua == ub:
		return " (same " + p.Expect.UniqueField + " " + ua + ": the replay was altered)"
	}
	return " (" + p.Expect.UniqueField + " " + ub + ", committed " + ua + ": not the committed execution's body)"
}

// statusOnlyNote says, when two answers differ only in their status, that they do, and
// how a target that replays with a status of its own declares it ("" otherwise). first
// names a's role ("the committed", "the first"); only when b is known to be the replay
// (replayed) does the note say which status to declare.
func statusOnlyNote(p *profile.Profile, a, b verdict.Op, first string, replayed bool) string {
	if a.Status == 0 || b.Status == 0 || sameStatus(p, a.Status, b.Status) || !sameBody(p, a.Body, b.Body) {
		return ""
	}
	note := fmt.Sprintf("status %d, %s %d, with the same body", b.Status, first, a.Status)
	switch {
	case !is2xx(a.Status) || !is2xx(b.Status):
	case replayed:
		note += fmt.Sprintf("; a target whose replays answer %d declares expect.replay_status: %d", b.Status, b.Status)
	default:
		note += "; a target whose replays answer another 2xx than the execution declares expect.replay_status"
	}
	return " (" + note + ")"
}

func anyClass(ops []verdict.Op, c outcome.Class) bool {
	for _, op := range ops {
		if op.Class == c {
			return true
		}
	}
	return false
}

package scenarios

import (
	"fmt"

	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/verdict"
)

// ControlStep names the step that repeats the first request of a scenario whose PASS
// means "the second request was independent of the first" (scope/*, the key pairs).
const ControlStep = "control"

// A second request that executes on its own proves independence only while the first
// key's record still stands: a key store that lost it (filed it under another key, as a
// store that aliases keys across reused connections does) lets any second request
// execute, scoped or not. So those scenarios repeat the first request after the second
// (the control step), and a PASS needs the control to get the first request's own
// response back: the first key still honoured, beside the second.

// controlPair names a scenario's two requests for honouredAfter.
type controlPair struct {
	first, second string // the steps: the first key's request, the one meant to be independent
	control       string // the step that repeats the first: ControlStep, or a step the scenario has already
	what          string // the second request in words: "the other principal's request"
}

// honouredAfter wraps the checker of such a scenario: its PASS stands only when the
// control repeat of the first request got that request's own response (its bytes, its
// expect.unique_field, or a marked replay that is not the second's). The second's
// response there is a leak the second request's own success hid (FAIL); a refusal of the
// first key as in flight or as a changed request says its record now holds the second
// (FAIL); a control nobody saw, or one with a response of its own, proves nothing
// (UNKNOWN).
func honouredAfter(pair controlPair, judge Checker) Checker {
	return func(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
		v, msg, ev := judge(r, p)
		if v != verdict.Pass {
			return v, msg, ev
		}
		f := finding{ev: ev}
		first, _ := stepAnswer(r, pair.first)
		second, _ := stepAnswer(r, pair.second)
		c, ok := stepAnswer(r, pair.control)
		switch {
		case !ok:
			return f.result(verdict.Unknown, "no control repeat of the first request was made: that the first key was still honoured after %s cannot be told; it saw: %s", pair.what, msg)
		case unseen(c):
			return f.result(verdict.Unknown, "the control repeat of the first key was not seen (%s): that the first key was still honoured after %s cannot be told; it saw: %s", describe(c), pair.what, msg)
		case isSuccess(second) && !sameResponse(p, second, first) && (sameResponse(p, c, second) || sameUnique(p, second, c)):
			f.count(verdict.CatLeaked, 1)
			f.example("first:   %d %s", first.Status, clip(first.Body))
			f.example("second:  %d %s", second.Status, clip(second.Body))
			f.example("control: %d %s", c.Status, clip(c.Body))
			f.blameAgainst(c, "the first request's own "+itoa(first.Status)+" replayed", &first)
			return f.result(verdict.Fail, "the control repeat of the first key got %s's response (%d): the two share one record, and %s executed on its own only because the first key's record was gone (what the second request alone showed: %s)", pair.what, c.Status, pair.what, msg)
		case keyRefusal(c.Class):
			f.example("control: %s %s", describe(c), clip(c.Body))
			f.blame(c, "the first request's own "+itoa(first.Status)+" replayed")
			return f.result(verdict.Fail, "the control repeat of the first key got %s (%s) after %s: the first key's record no longer answers its own request (what the second request alone showed: %s)", describe(c), c.Class, pair.what, msg)
		case isSuccess(first) && isSuccess(c) && (sameResponse(p, c, first) || sameUnique(p, first, c)):
			return f.result(verdict.Pass, "%s; the control repeat of the first key replayed its own response (%d)", msg, c.Status)
		case !isSuccess(first) && isSuccess(c):
			// The first request's own answer was not seen whole (a gateway's 504), and the
			// checker passed on the ledger counting one effect per request: a success
			// that is not the second's is the first key's committed response.
			return f.result(verdict.Pass, "%s; the control repeat of the first key got %d, not %s's response (the first request's own answer was %s)", msg, c.Status, pair.what, describe(first))
		case c.Class == outcome.Success:
			return f.result(verdict.Unknown, "the control repeat of the first key got %d with a response that is neither the first request's nor %s's: that the first key was still honoured cannot be told; it saw: %s", c.Status, pair.what, msg)
		}
		return f.result(verdict.Unknown, "the control repeat of the first key got %s, not its response replayed: that the first key was still honoured after %s cannot be told; it saw: %s", describe(c), pair.what, msg)
	}
}

// FollowUpStep names the repeat an expiry scenario sends right after its own repeat.
const FollowUpStep = "follow-up"

// A repeat that executed again may have reached the target after the declared
// retention (a loaded machine delayed it), where a new execution is allowed: two effects
// then prove nothing by themselves. A follow-up sent right after it tells "expired" from
// "executed while the key was held": a record does not come back once expired, so a
// follow-up answered with the original's response (not the repeat's own) shows the
// original's record still standing after the repeat executed.

// followedUp wraps an expiry checker that judges steps "original" and "repeat" (the
// follow-up's attempt stays in the record: one that came late may have executed anew,
// and the effects allowed count its window), and where the verdict is UNKNOWN only
// because the retention may have allowed the second effect, a follow-up that got the
// original's response makes it the FAIL it is.
func followedUp(judge Checker) Checker {
	return func(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
		v, msg, ev := judge(r, p)
		n := r.Ledger[verdict.LedgerOperation]
		if v == verdict.Pass && n > 1 {
			// The repeat replayed; the follow-up, late on a loaded machine, executed anew
			// where the retention allows it.
			return v, fmt.Sprintf("%s; %d side effects in all: the follow-up %s", msg, n, mayBeLate("came late and", p)), ev
		}
		if r.LedgerErr != "" || v != verdict.Unknown || n < 2 || n > allowedEffects(r, p) {
			return v, msg, ev
		}
		first, _ := stepAnswer(r, "original")
		repeat, _ := stepAnswer(r, "repeat")
		follow, ok := stepAnswer(r, FollowUpStep)
		distinct := !sameResponse(p, first, repeat) && !sameUnique(p, first, repeat)
		if !ok || !isSuccess(first) || !isSuccess(repeat) || !isSuccess(follow) || !distinct ||
			!(sameResponse(p, follow, first) || sameUnique(p, first, follow)) {
			return v, msg, ev
		}
		f := finding{ev: ev}
		// The follow-up replayed (it got the original's response): the effects are the
		// original's and the repeat's.
		f.count(verdict.CatDuplicated, n-1)
		f.example("original: %d %s", first.Status, clip(first.Body))
		f.example("repeat:   %d %s (executed again)", repeat.Status, clip(repeat.Body))
		f.example("follow-up: %d %s", follow.Status, clip(follow.Body))
		f.blameAgainst(repeat, "the original's "+itoa(first.Status)+" replayed", &first)
		return f.result(verdict.Fail, "the repeat executed again (%d side effects for one key), and the follow-up sent right after it got the original's response, not the repeat's: the original's record still stood after the repeat executed (a record does not come back once expired), so the repeat executed while the key was held, whatever the retention allowed", n)
	}
}

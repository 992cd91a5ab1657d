package scenarios

import (
	"strings"
	"time"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/transport"
	"github.com/idemproof/idemproof/verdict"
)

func recoveryScenarios() []Scenario {
	return []Scenario{
		{
			ID:          "recovery/crash-after-key",
			Description: "the original is abandoned after the key insert; a retry after the lock timeout executes",
			Requirement: "a stale lock is taken over after lock_timeout: the retry executes exactly once, the key is not wedged",
			Source:      srcBrandur,
			Level:       verdict.LevelMust,
			Labels:      []string{"group:recovery", "fault:crash", "level:must", "speed:slow"},
			Needs:       []profile.Capability{profile.CapCrashAfterKey, profile.CapLockTimeout},
			Steps:       []Step{{Name: "original", Hook: HookCrashAfterKey}, {Name: "retry", Wait: WaitPastLock}},
			Settle:      &Settle{},
			Check:       crashed("original", "crash.after_key", exactlyOnce("retry")),
		},
		{
			ID:          "recovery/client-gave-up",
			Description: "the client gives up while the target still works; the retry after the work would have ended gets its one result",
			Requirement: "a client that leaves mid-work (its timeout) neither wedges the key nor lets the work run twice: the retry replays the committed result or, if the work was abandoned and its key released, executes it once; where the retry may have come after the declared retention, a control key held as long beforehand, whose client stays, tells an expired record (the control is not replayed either) from a key lost with its client (the control still replays)",
			Source:      and(srcBrandur, srcSeed),
			Level:       verdict.LevelSafety,
			Labels:      []string{"group:recovery", "fault:none", "level:safety", "speed:slow"},
			Needs:       []profile.Capability{profile.CapSlow},
			// The original's attempt keeps client_timeout while the work is held past it,
			// so the client leaves and the proxy cuts the target's connection mid-work. First
			// a control key of its own, on an entity of its own, is held as long with a
			// client that stays, and repeated a little later than the retry will be: where
			// the retry may have come after the declared retention, whether the control
			// replayed tells an expired record from a key lost with its client. (Before the
			// original, not beside it: a target that serves one request at a time would
			// hold the original behind it.)
			Steps: []Step{
				{Name: gaveUpControl, Key: KeyOther, OtherEntity: true, Hook: HookSlowPastTimeoutWaited},
				{Name: gaveUpControlRepeat, Key: KeyOther, OtherEntity: true, Wait: WaitPastHoldAgain},
				{Name: "original", Hook: HookSlowPastTimeout},
				{Name: "retry", Wait: WaitPastHold},
			},
			Settle: &Settle{},
			Check:  gaveUpThenOnce,
		},
		{
			ID:          "recovery/crash-after-commit",
			Description: "the original is abandoned after the commit; the retry gets the committed result",
			Requirement: "the side effect and the stored response commit together: the retry replays, one side effect",
			Source:      and(srcBrandur, srcSeed),
			Level:       verdict.LevelSafety,
			Labels:      []string{"group:recovery", "fault:crash", "level:safety"},
			Needs:       []profile.Capability{profile.CapCrashAfterCommit},
			Steps:       []Step{{Name: "original", Hook: HookCrashAfterCommit}, {Name: "retry"}},
			Settle:      &Settle{},
			Check:       crashed("original", "crash.after_commit", exactlyOnce("retry")),
		},
		{
			ID:          "recovery/slow-past-lock",
			Description: "the original outlives the lock timeout and a retry takes over",
			Requirement: "a takeover fences the stale original: still exactly one side effect",
			Source:      and(srcBrandur, srcSeed),
			Level:       verdict.LevelSafety,
			Labels:      []string{"group:recovery", "fault:none", "level:safety", "speed:slow"},
			Needs:       []profile.Capability{profile.CapSlow, profile.CapLockTimeout},
			// The settle step comes once both finished; the ledger is read after it, and
			// effects are counted per retention window, as a late request may open one.
			Steps: []Step{
				{Name: "original", Hook: HookSlowPastLock, Background: true},
				{Name: "takeover", Wait: WaitPastLock},
			},
			Settle: &Settle{},
			Check:  atMostOnce,
		},
	}
}

// atMostOnce: the takeover race may legitimately end with either side succeeding, but
// once both finished the ledger must show exactly one effect, and the settle step must
// get the response of the one that committed.
func atMostOnce(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
	if r.LedgerErr != "" {
		return unknownLedger(r)
	}
	var f finding
	n, allowed := r.Ledger[verdict.LedgerOperation], allowedEffects(r, p)
	orig, _ := stepAnswer(r, "original")
	take, _ := stepAnswer(r, "takeover")
	var wants []verdict.Op
	for _, op := range []verdict.Op{take, orig} {
		if isSuccess(op) {
			wants = append(wants, op)
		}
	}
	switch {
	case n > allowed:
		f.count(verdict.CatDuplicated, n-allowed)
		f.example("original %s, takeover %s", describe(orig), describe(take))
		f.blame(orig, "no commit once the lock went stale (fenced by the takeover)")
		return f.result(verdict.Fail, "the stale original and the takeover both committed: %d side effects", n)
	case n == 0 && len(wants) > 0:
		f.count(verdict.CatLost, 1)
		return f.result(verdict.Fail, "a success was delivered but the ledger shows no side effect")
	}
	settle, v, msg, failed := judgeSettle(r, p, &f, wants, true)
	if failed {
		return v, msg, f.ev
	}
	switch {
	case take.Class == outcome.InFlight && isSuccess(orig):
		// Nothing took over, so nothing was fenced: a PASS would hide a target without
		// fencing whenever the machine is slow (the original reached the target late and
		// its lock was still live). It is what a target does that holds its lock for the
		// whole request, as a transaction does, and never takes over a live one: the
		// observed policy, with its one side effect, not a proof of fencing.
		return f.result(verdict.Info, "no takeover: the takeover got %s while the original still held the key, and the original committed (%s), one side effect; fencing was not exercised", describe(take), describe(orig))
	case take.Class == outcome.InFlight:
		// The takeover met a live lock: on a loaded machine the original reached the
		// target late, so the takeover came too early to be one.
		return f.result(verdict.Unknown, "the takeover got %s (the lock was still live) and the original %s: no takeover to judge", describe(take), describe(orig))
	case isSuccess(take) && isSuccess(orig) && sameResponse(p, take, orig) && !answeredBefore(r, p, take, orig):
		// The original's own response, and no sooner than the original had it: the
		// takeover waited for the live original (a lock held for the whole request, as a
		// mutex or a transaction holds it) or came after it. A takeover that executed
		// would have been answered while the original was still held. Nothing was fenced.
		return f.result(verdict.Info, "no takeover: the takeover got the original's committed response (%d) only when the original finished, so it waited for the live original (or came after it); one side effect, and fencing was not exercised", take.Status)
	case len(wants) == 0 && (unseen(orig) || unseen(take)):
		if settle.ran && isSuccess(settle.last) && n >= 1 {
			return f.result(verdict.Pass, "one side effect: original %s, takeover %s; the settle retry got %d", describe(orig), describe(take), settle.last.Status)
		}
		return f.result(verdict.Unknown, "neither answer showed the result: original %s, takeover %s", describe(orig), describe(take))
	case len(wants) == 0:
		f.count(verdict.CatStuck, 1)
		f.blame(take, "the takeover's success once the lock went stale")
		return f.result(verdict.Fail, "neither the original (%s) nor the takeover (%s) succeeded", describe(orig), describe(take))
	}
	return f.result(verdict.Pass, "one side effect: original %s, takeover %s", describe(orig), describe(take))
}

// answeredBefore reports whether a was answered well before the original finished at the
// target (by more than releasedTogether's margin): it did not wait for the original.
func answeredBefore(r verdict.Record, p *profile.Profile, a, original verdict.Op) bool {
	end := original.Time
	if first, ok := originalRecord(r); ok && first.UpstreamMillis > 0 && answeredBy(first, original) {
		end = first.Time.Add(millisDuration(first.UpstreamMillis))
	}
	return end.Sub(a.Time) > max(100*time.Millisecond, slowHold(p)/4)
}

// gaveUpJudged judges the retry after the client gave up, but only when it did: an
// original that got its answer inside client_timeout (a hook that did not hold) left the
// target nothing to see. An answer cut at client_timeout counts as given up too: an MCP
// tool that streams progress sends its 200 and events at once and its result only when
// the work is done. So does a 5xx: someone gave up on the work before the client did.
// The record is the scenario's own key's (gave_up_control.go takes the control out).
func gaveUpJudged(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
	a, ok := stepAnswer(r, "original")
	if ok && a.Class == outcome.ServerError {
		// A gateway in front of the target gave up first (nginx's 504 at its read
		// timeout, closing its connection to the target as a client that leaves does);
		// or the target failed. Either way the retry must get the one result.
		v, msg, ev := exactlyOnce("retry")(r, p)
		return v, "the original got " + describe(a) + " before client_timeout (a gateway in front gave up, or the target failed): " + msg, ev
	}
	gaveUp := giveUpAfter(r, p)
	if !ok || (a.Error != transport.TimedOut && a.Error != "truncated: "+transport.TimedOut) {
		var f finding
		return f.result(verdict.Unknown, "the original got %s within its client timeout (%s): the slow hook did not hold the work past it, so no client left mid-work", describe(a), gaveUp)
	}
	v, msg, ev := exactlyOnce("retry")(r, p)
	if v == verdict.Fail && ev.Categories[verdict.CatStuck] > 0 {
		// The target may work on for the whole hold the hook asked of it, the client
		// gone: a refusal before that hold ended is the work still running, not a stuck
		// key. The hold is the one the journal shows was sent, else the scenario's.
		if last, ok := lastRefusal(r); ok {
			if j, ok := originalRecord(r); ok {
				hold := appliedHold(j, p, gaveUp)
				if end := forwardedAt(j).Add(hold); !last.Time.After(end) {
					var f finding
					return f.result(verdict.Unknown, "the client gave up after %s while the work was held: the key was still refused (%s) %s after the original reached the target, but the hold applied to it was %s: the target may still have been working, so no stuck key is proven",
						gaveUp, describe(last), roundDuration(last.Time.Sub(forwardedAt(j))), hold)
				}
			}
		}
	}
	return v, "the client gave up after " + gaveUp.String() + " while the work was held: " + msg, ev
}

// lastRefusal is the scenario's last answer, when it is a refusal as in flight.
func lastRefusal(r verdict.Record) (verdict.Op, bool) {
	for i := len(r.History) - 1; i >= 0; i-- {
		if op := r.History[i]; op.Type != verdict.OpInvoke {
			return op, op.Class == outcome.InFlight
		}
	}
	return verdict.Op{}, false
}

// giveUpAfter is the client timeout recovery/client-gave-up's original was given: the
// one its plan fitted to the declared retention, else client_timeout.
func giveUpAfter(r verdict.Record, p *profile.Profile) time.Duration {
	if d := r.Plan.GiveUpAfter(); d > 0 {
		return d
	}
	return p.ClientTimeout.Std()
}

// appliedHold is the hold the slow hook asked of the request a journal record carries:
// the hook header's value as the proxy saw it, when it is a duration; otherwise (another
// form, such as a body field, which the journal does not keep) the hold
// recovery/client-gave-up sends past the client timeout it gave the original
// (giveUpHoldFor).
func appliedHold(j faultproxy.Record, p *profile.Profile, gaveUp time.Duration) time.Duration {
	if p.Slow != nil && p.Slow.Header != "" {
		for name, value := range j.Headers {
			if strings.EqualFold(name, p.Slow.Header) {
				if d, err := time.ParseDuration(value); err == nil && d > 0 {
					return d
				}
			}
		}
	}
	return giveUpHoldFor(gaveUp)
}

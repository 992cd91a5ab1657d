package scenarios

import (
	"fmt"
	"maps"
	"strings"

	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/verdict"
)

// newerKeys is how many newer keys expiry/not-evicted sends between a key's first request
// and its repeat: more than a bounded in-process cache of a few hundred keys (an LRU in
// front of, or instead of, a durable store) holds, few enough for a sandbox API.
const newerKeys = 500

// newerKeysStep names the step of expiry/not-evicted that sends the newer keys.
const newerKeysStep = "newer-keys"

// minNewerExecuted is how many newer keys must have executed for expiry/not-evicted to
// claim that its key outlived them: a target that refused, rate-limited or was too slow
// for most of them (the step sends for at most freshKeysWindow) stored too few to evict
// anything.
const minNewerExecuted = 200

func expiryScenarios() []Scenario {
	return []Scenario{
		{
			ID:          "expiry/not-evicted",
			Description: fmt.Sprintf("a repeat after %d newer keys, inside the retention, replays", newerKeys),
			Requirement: "a key is honoured for its retention however many keys came after it: a bounded cache that evicts old keys executes their retries again; a repeat that executed again and may have come after the retention is judged by a follow-up sent right after it (the original's response there: the record still stood, FAIL)",
			Source:      and(srcDraftExpiry, srcStripe),
			Level:       verdict.LevelMust,
			Labels:      []string{"group:expiry", "fault:none", "level:must"},
			Steps:       []Step{{Name: "original"}, {Name: newerKeysStep, FreshKeys: newerKeys}, {Name: "repeat"}, {Name: FollowUpStep}},
			Check:       followedUp(notEvicted),
		},
		{
			ID:          "expiry/inside-window",
			Description: "a repeat just inside the declared retention replays",
			Requirement: "a key is honoured for the whole declared retention; a repeat that executed again and may have come after it (a loaded machine) is judged by a follow-up sent right after it (the original's response there: the record still stood, FAIL)",
			Source:      and(srcDraftExpiry, srcStripe),
			Level:       verdict.LevelMust,
			Labels:      []string{"group:expiry", "fault:none", "level:must", "speed:slow"},
			Needs:       []profile.Capability{profile.CapRetention},
			Steps:       []Step{{Name: "original"}, {Name: "repeat", Wait: WaitInsideWindow}, {Name: FollowUpStep}},
			Check:       followedUp(insideWindow),
		},
		{
			ID:          "expiry/after-window",
			Description: "a repeat after the declared retention executes anew",
			Requirement: "a key expires after the declared retention: the repeat executes for real",
			Source:      srcDraftExpiry,
			Level:       verdict.LevelMust,
			Labels:      []string{"group:expiry", "fault:none", "level:must", "speed:slow"},
			Needs:       []profile.Capability{profile.CapRetention},
			Steps:       []Step{{Name: "original"}, {Name: "repeat", Wait: WaitPastWindow}},
			Check:       executedAnew,
		},
	}
}

func executedAnew(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
	if r.LedgerErr != "" {
		return unknownLedger(r)
	}
	var f finding
	a, _ := stepAnswer(r, "original")
	b, _ := stepAnswer(r, "repeat")
	if !isSuccess(a) {
		return f.result(verdict.Unknown, "the original did not succeed (%s)", describe(a))
	}
	n := r.Ledger[verdict.LedgerOperation]
	switch {
	case unseen(b):
		return f.result(verdict.Unknown, "the repeat's answer was not seen (%s): whether it executed anew cannot be told", describe(b))
	case !isSuccess(b):
		f.blame(b, "a fresh success (a new execution)")
		return f.result(verdict.Fail, "the repeat after the window got %s, want a fresh 2xx", describe(b))
	case n == 1 && !sameResponse(p, a, b) && !replayMarked(b, p):
		// A response of its own, and no replay marker: a new execution whose effect the
		// ledger does not show (yet, if it lags), not the replay.
		if ua, okA := uniqueValue(p, a.Body); okA {
			if ub, okB := uniqueValue(p, b.Body); okB && ua != ub {
				f.count(verdict.CatLost, 1)
				f.blame(b, "its side effect in the ledger")
				return f.result(verdict.Fail, "the repeat executed anew (its own %s %s) but the ledger shows one side effect", p.Expect.UniqueField, clipValue(ub))
			}
		}
		return f.result(verdict.Unknown, "the repeat got a response of its own (%d), but the ledger shows one side effect: a new execution the ledger does not show, or a replay that differs; declare expect.unique_field to tell", b.Status)
	case n == 1:
		f.blameAgainst(b, "a new execution, not the replay", &a)
		return f.result(verdict.Fail, "still replayed after the declared %s retention (one side effect)", p.Retention)
	case n > 2:
		f.count(verdict.CatDuplicated, n-2)
		return f.result(verdict.Fail, "%d side effects from two requests", n)
	}
	return f.result(verdict.Pass, "executed anew after the %s window (%d)", p.Retention, b.Status)
}

// notEvicted judges the key's original and repeat as identicalReplay does, once the newer
// keys' attempts are taken out of the record. Their side effects are in a ledger of their
// own (the side entity), except under a global ledger, which counts every effect: there
// each executed newer key is subtracted, and a newer key whose answer was not seen may or
// may not have added one, so the verdict must hold at both ends of that range.
func notEvicted(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
	if r.LedgerErr != "" {
		return unknownLedger(r)
	}
	var f finding
	own := r
	own.History = nil
	sent, executed, unseenNewer, refused := 0, 0, 0, 0
	for _, op := range r.History {
		if op.Step != newerKeysStep {
			own.History = append(own.History, op)
			continue
		}
		switch {
		case op.Type == verdict.OpInvoke:
			sent++
		case op.Class == outcome.Success:
			executed++
		case unseen(op):
			unseenNewer++
		default:
			refused++
		}
	}
	judge := identicalReplay("original", "repeat")
	withEffects := func(n int) (verdict.Verdict, string, verdict.Evidence) {
		own.Ledger = maps.Clone(r.Ledger)
		own.Ledger[verdict.LedgerOperation] = max(n, 0)
		return judge(own, p)
	}
	n := r.Ledger[verdict.LedgerOperation]
	ruling, msg, ev := withEffects(n)
	if p.SideEffects.Global() {
		ruling, msg, ev = withEffects(n - executed)
		if unseenNewer > 0 {
			// Where both ends agree, the end that charges this key the fewest effects
			// words the verdict: what it says holds whatever the unseen keys did.
			v, m, e := withEffects(n - executed - unseenNewer)
			if v != ruling {
				return f.result(verdict.Unknown, "%d of the %d newer keys' answers were not seen, and the global ledger counts their side effects with this key's: whether the repeat executed again cannot be told", unseenNewer, sent)
			}
			ruling, msg, ev = v, m, e
		}
	}
	newer := fmt.Sprintf("after %d newer keys executed", executed)
	if unseenNewer+refused > 0 {
		newer = fmt.Sprintf("after %d newer keys executed (%d not seen, %d refused or failed)", executed, unseenNewer, refused)
	}
	if repeat, ok := refusedAsKnown(own, ruling, ev); ok {
		// Still known: not evicted, which is all this scenario asks.
		if executed < minNewerExecuted {
			return f.result(verdict.Info, "the key was still known (the repeat got %s, no second execution), but only %d newer keys executed (%d sent of %d in at most %s; %d not seen, %d refused or failed): fewer than the %d it takes to show that older keys are not evicted",
				describe(repeat), executed, sent, newerKeys, freshKeysWindow(p), unseenNewer, refused, minNewerExecuted)
		}
		return f.result(verdict.Pass, "not evicted: the key was still known %s — its repeat was refused as a repeat (%s) and did not execute again; it was not replayed, which replay/sequential judges", newer, describe(repeat))
	}
	switch {
	case ruling == verdict.Fail && ev.Categories[verdict.CatDuplicated] > 0:
		return ruling, msg + ", " + newer + ": the key was forgotten inside its retention (evicted for the newer keys, or kept for less than the declared retention)", ev
	case ruling != verdict.Pass:
		return ruling, msg + " (" + newer + ")", ev
	case executed < minNewerExecuted:
		return f.result(verdict.Info, "the repeat replayed, but only %d newer keys executed (%d sent of %d in at most %s; %d not seen, %d refused or failed): fewer than the %d it takes to show that older keys are not evicted",
			executed, sent, newerKeys, freshKeysWindow(p), unseenNewer, refused, minNewerExecuted)
	}
	return ruling, msg + ", " + newer, ev
}

// insideWindow is identicalReplay, and a repeat that executed again late in the window
// says that the record may not have lived as long as declared (an early expiry).
func insideWindow(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
	v, msg, ev := identicalReplay("original", "repeat")(r, p)
	if repeat, ok := refusedAsKnown(r, v, ev); ok {
		// Still known this late in its window, which is what this scenario asks.
		var f finding
		return f.result(verdict.Pass, "the key was honoured late in its window: the repeat was refused as a repeat (%s) and did not execute again%s; it was not replayed, which replay/sequential judges", describe(repeat), windowTimes(r, p))
	}
	if v == verdict.Fail && ev.Categories[verdict.CatDuplicated] > 0 {
		// The lead is what this scenario found: the key not honoured this late in its
		// window. keyIgnored's "every repeat executed again (ignored, or scoped
		// narrower…)" reads as a key never honoured, which one late repeat cannot tell
		// from a key that expired early (fiber's storage expires on a clock of whole
		// seconds, up to a second early).
		msg = strings.TrimPrefix(msg, keyIgnored(r, r.Ledger[verdict.LedgerOperation]))
		msg = fmt.Sprintf("the key was not honoured for the whole declared retention: the repeat late in the window executed again%s: %s; a key honoured by an immediate repeat (replay/sequential) but not here was kept for less than the declared %s (if replay/sequential fails too, the key was never honoured)",
			windowTimes(r, p), msg, p.Retention.Std())
	}
	if v == verdict.Pass {
		// What the PASS is about: the key was still honoured this late in its window.
		msg = "the key was honoured late in its window: " + msg + windowTimes(r, p)
	}
	return v, msg, ev
}

// windowTimes says when the repeat was sent and answered, counted from the original's
// send, against the declared retention.
func windowTimes(r verdict.Record, p *profile.Profile) string {
	start, ok := stepInvokedAt(r, "original")
	sent, okS := stepInvokedAt(r, "repeat")
	answer, okA := stepAnswer(r, "repeat")
	if !ok || !okS || !okA {
		return ""
	}
	return fmt.Sprintf(" (the repeat was sent %s and answered %s after the original's send, of a declared %s retention)",
		roundDuration(sent.Sub(start)), roundDuration(answer.Time.Sub(start)), p.Retention.Std())
}

// refusedAsKnown is the repeat of an expiry scenario whose FAIL is a refusal as a repeat
// (in flight, or a mismatch) with no second execution: the target still knew the key,
// which is all an expiry scenario asks; the refusal instead of a replay is
// replay/sequential's finding.
func refusedAsKnown(r verdict.Record, v verdict.Verdict, ev verdict.Evidence) (verdict.Op, bool) {
	repeat, ok := stepAnswer(r, "repeat")
	return repeat, ok && v == verdict.Fail && ev.Categories[verdict.CatDuplicated] == 0 && keyRefusal(repeat.Class)
}

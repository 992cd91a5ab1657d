package scenarios

import (
	"fmt"

	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/verdict"
)

// keyPairScenarios send one payload under two keys that are distinct but that a
// key-handling bug takes for one key: a store that folds case (a case-insensitive
// collation on the key column), a store that keeps only a prefix of the key (a
// VARCHAR(64) column, a prefix index) while the API accepts 255 characters. The second
// key must execute on its own; answered the first key's stored response with nothing
// executed behind it, the client believes in an operation that never happened.
func keyPairScenarios() []Scenario {
	return []Scenario{
		{
			ID:          "key/case-distinct",
			Description: "two keys that differ only in letter case are two operations",
			Requirement: "keys are case-sensitive: two keys that differ only in letter case, with one payload, execute twice (two side effects, two responses), and the first key repeated afterwards (the control) replays its own response",
			Source:      and(and(srcDraftSyntax, srcDraftUniqueness), srcSeed),
			Level:       verdict.LevelSafety,
			Labels:      []string{"group:key", "fault:none", "level:safety"},
			Needs:       []profile.Capability{profile.CapCaseSensitiveKeys},
			Steps:       []Step{{Name: "first", Key: KeyCaseFirst}, {Name: "second", Key: KeyCaseSecond}, {Name: ControlStep, Key: KeyCaseFirst}},
			Check: honouredAfter(controlPair{"first", "second", ControlStep, "the second key"}, distinctPair(pairOfKeys{
				keys:  "two keys that differ only in letter case",
				shape: "a key with upper- and lower-case letters",
			})),
		},
		{
			ID:          "key/long-prefix-distinct",
			Description: "two keys of the longest length (255, or expect.max_key_length) that share all but their last character are two operations",
			Requirement: "a key is kept whole: two keys of the longest length the API accepts that differ only in their last character, with one payload, execute twice (two side effects, two responses), and the first key repeated afterwards (the control) replays its own response",
			Source:      and(and(srcStripe+" (keys up to 255 characters)", srcDraftUniqueness), srcSeed),
			Level:       verdict.LevelSafety,
			Labels:      []string{"group:key", "fault:none", "level:safety"},
			Needs:       []profile.Capability{profile.CapKeyLengthLimit},
			Steps:       []Step{{Name: "first", Key: KeyLongPrefixFirst}, {Name: "second", Key: KeyLongPrefixSecond}, {Name: ControlStep, Key: KeyLongPrefixFirst}},
			Check: honouredAfter(controlPair{"first", "second", ControlStep, "the second key"}, distinctPair(pairOfKeys{
				keys:     "two %d-character keys that differ only in their last character",
				shape:    "a %d-character key",
				lengthed: true,
				note:     " (key/max-length judges the length)",
			})),
		},
	}
}

// pairOfKeys names a scenario's two keys in its messages.
type pairOfKeys struct {
	keys  string // what the two keys are: "two keys that differ only in letter case"
	shape string // what a refusal of the first key refused
	note  string // appended to the message of that refusal
	// lengthed: keys and shape hold a %d for the keys' length (Profile.maxKeyLen).
	lengthed bool
}

// distinctPair judges steps "first" and "second": one payload under two distinct keys.
// Proof that both executed is the ledger counting two effects; the second key answered
// the first's response (the same body, the same expect.unique_field, or a replay marker)
// is the collision. A refused key shape is no collision: nothing was recorded that the
// other key could meet.
func distinctPair(pair pairOfKeys) Checker {
	return func(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
		kp := pair
		if kp.lengthed {
			kp.keys, kp.shape = fmt.Sprintf(kp.keys, p.MaxKeyLen()), fmt.Sprintf(kp.shape, p.MaxKeyLen())
		}
		if r.LedgerErr != "" {
			return unknownLedger(r)
		}
		var f finding
		a, okA := stepAnswer(r, "first")
		b, okB := stepAnswer(r, "second")
		if !okA || !okB {
			return f.result(verdict.Unknown, "a step never answered")
		}
		n := r.Ledger[verdict.LedgerOperation]
		for _, op := range []verdict.Op{a, b} {
			if op.Class == outcome.ServerError {
				f.example("%s key %s: %s", op.Step, pairKey(op.Key), describe(op))
				f.blame(op, "a success of its own")
				return f.result(verdict.Fail, "the %s key got %s from the target, want a 2xx", op.Step, describe(op))
			}
		}
		// The control repeat of the first key replays: one effect per key, and one more
		// only where it may have come after the declared retention.
		if most := 1 + allowedEffects(r, p); n > most {
			f.count(verdict.CatDuplicated, n-most)
			return f.result(verdict.Fail, "%d side effects from %s sent once each (and the first again as the control repeat, which must replay), want at most %d", n, kp.keys, most)
		}
		succ := 0
		for _, op := range []verdict.Op{a, b} {
			if isSuccess(op) {
				succ++
			}
		}
		lost := func() (verdict.Verdict, string, verdict.Evidence) {
			f.count(verdict.CatLost, succ-n)
			for _, op := range []verdict.Op{a, b} {
				if isSuccess(op) {
					f.blame(op, "a success with its side effect")
				}
			}
			return f.result(verdict.Fail, "%s: %d success(es) but %d side effect(s)", kp.keys, succ, n)
		}
		switch {
		case a.Class.Refusal():
			// The shape was refused before anything was recorded under it.
			if succ > n {
				return lost()
			}
			return f.result(verdict.Info, "the target refused %s: the first key got %s; nothing was recorded under it for the second key to collide with%s (second: %s, %d side effect(s))",
				kp.shape, describe(a), kp.note, describe(b), n)
		case a.Class.Determinate() && !isSuccess(a):
			return f.result(verdict.Unknown, "the first key got %s (%s), not a success: nothing to judge", describe(a), a.Class)
		case b.Class == outcome.InFlight || (b.Class == outcome.Mismatch && isSuccess(a)):
			// The first key's record answered for the second: the in-flight lock, or the
			// fingerprint of a request the second key never made.
			f.example("first %s: %s %s", pairKey(a.Key), describe(a), clip(a.Body))
			f.example("second %s: %s %s", pairKey(b.Key), describe(b), clip(b.Body))
			f.blame(b, "a success of its own")
			return f.result(verdict.Fail, "%s: the second key was refused with %s (%s), as if it were the first: they are two keys, two operations", kp.keys, describe(b), b.Class)
		case b.Class.Refusal():
			if succ > n {
				return lost()
			}
			if unseen(a) {
				return f.result(verdict.Info, "the second key was refused with %s, and the first key's answer was not seen (%s): a refused key is no collision, it got nothing of the first key's (%d side effect(s))",
					describe(b), describe(a), n)
			}
			return f.result(verdict.Info, "the second key was refused with %s although the first, of the same shape, was accepted (%s): not a collision, it got nothing of the first key's, but the two keys were not treated alike",
				describe(b), describe(a))
		case b.Class.Determinate() && !isSuccess(b):
			return f.result(verdict.Unknown, "the second key got %s (%s), not a success: nothing to judge", describe(b), b.Class)
		}
		// Each answer is a success or was not seen.
		if isSuccess(a) && isSuccess(b) {
			sameID, marked := sameUnique(p, a, b), replayMarked(b, p)
			if n < 2 && (sameResponse(p, a, b) || sameID || marked) {
				f.count(verdict.CatLost, 2-n)
				f.example("first %s: %d %s", pairKey(a.Key), a.Status, clip(a.Body))
				f.example("second %s: %d %s", pairKey(b.Key), b.Status, clip(b.Body))
				f.blameAgainst(b, "an execution of its own, not the first key's response", &a)
				return f.result(verdict.Fail, "%s: the second key was answered the first key's response with %d side effect(s): the target took them for one key", kp.keys, n)
			}
			if n == 2 && (sameID || marked) {
				f.count(verdict.CatLeaked, 1)
				f.example("first %s: %d %s", pairKey(a.Key), a.Status, clip(a.Body))
				f.example("second %s: %d %s", pairKey(b.Key), b.Status, clip(b.Body))
				f.blameAgainst(b, "its own execution's response, not the first key's", &a)
				return f.result(verdict.Fail, "%s: two side effects, but the second key was answered the first key's response (%s)", kp.keys, sameWhat(p, sameID))
			}
		}
		switch {
		case succ > n:
			return lost()
		case n == 2 && succ == 2 && sameResponse(p, a, b):
			return f.result(verdict.Pass, "two side effects from %s; the two responses are identical (the body carries no per-execution id)", kp.keys)
		case n == 2 && succ == 2:
			return f.result(verdict.Pass, "two side effects from %s, two responses of their own%s", kp.keys, ownIDs(p, a, b))
		case n == 2:
			return f.result(verdict.Pass, "two side effects from %s (%s)", kp.keys, describeUnseen([]verdict.Op{a, b}))
		}
		return f.result(verdict.Unknown, "%d side effect(s) from %s; %s, so whether both executed cannot be told", n, kp.keys, describeUnseen([]verdict.Op{a, b}))
	}
}

// pairKey shows a key of the pair in an example line: a long key by its start and its
// end, where the two keys of the long pair differ.
func pairKey(k string) string {
	if len(k) <= 60 {
		return quoteKey(k)
	}
	return fmt.Sprintf("%q…%q (%d characters)", k[:24], k[len(k)-8:], len(k))
}

// sameWhat says how a response was recognised as another's.
func sameWhat(p *profile.Profile, sameID bool) string {
	if sameID {
		return "the same " + p.Expect.UniqueField
	}
	return "marked " + p.Expect.ReplayHeader
}

// ownIDs names the two per-execution values in a message, when the profile declares them.
func ownIDs(p *profile.Profile, a, b verdict.Op) string {
	ua, okA := uniqueValue(p, a.Body)
	ub, okB := uniqueValue(p, b.Body)
	if !okA || !okB {
		return ""
	}
	return fmt.Sprintf(" (%s %s and %s)", p.Expect.UniqueField, clipValue(ua), clipValue(ub))
}

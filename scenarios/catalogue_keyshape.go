package scenarios

import (
	"fmt"
	"strings"

	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/verdict"
)

// validShapes are the key shapes key/valid-never-5xx sends: UUID and not, from 1 to 255
// characters. A popular framework answers 500 to any key that is not exactly 36 long.
var validShapes = []KeyForm{KeyUUID, KeyULID, KeyBase64URL, KeyOneChar, Key255}

func keyShapeScenarios() []Scenario {
	var shapeSteps []Step
	for _, f := range validShapes {
		shapeSteps = append(shapeSteps, Step{Name: string(f), Key: f}, Step{Name: string(f) + againSuffix, Key: f})
	}
	return []Scenario{
		{
			ID:          "key/distinct-keys-same-body",
			Description: "two different keys with the same payload are two operations",
			Requirement: "different keys are different operations: two keys with one payload execute twice (two side effects, two responses), and the first key repeated afterwards (the control) replays its own response",
			Source:      and(srcDraftUniqueness, srcSeed),
			Level:       verdict.LevelSafety,
			Labels:      []string{"group:key", "fault:none", "level:safety"},
			Steps:       []Step{{Name: "first"}, {Name: "second", Key: KeyOther}, {Name: ControlStep}},
			Check:       honouredAfter(controlPair{"first", "second", ControlStep, "the second key"}, distinctKeysSameBody),
		},
		{
			ID:          "key/valid-never-5xx",
			Description: "valid keys of several shapes (UUID, ULID, base64url, 1 character and the longest, 255 or expect.max_key_length) never get a 5xx",
			Requirement: "any valid key is accepted without a 5xx; each executes once and its repeat replays",
			Source:      and(srcDraftSyntax, srcStripe+" (keys up to 255 characters)"),
			Level:       verdict.LevelMust,
			Labels:      []string{"group:key", "fault:none", "level:must"},
			Needs:       []profile.Capability{profile.CapFreeFormKeys},
			Steps:       shapeSteps,
			Check:       validNever5xx,
		},
		{
			ID:          "key/empty-quoted",
			Description: "an empty quoted key \"\" is refused, never used as a key",
			Requirement: "the sf-string of the empty string is an empty key: it gets a 4xx and does not execute",
			Source:      srcDraftSyntax,
			Level:       verdict.LevelShould,
			Labels:      []string{"group:key", "fault:none", "level:should"},
			Needs:       []profile.Capability{profile.CapKeyHeader, profile.CapFreeFormKeys},
			Steps:       []Step{{Name: "empty-quoted", Key: KeyEmptyQuoted}, {Name: "empty-quoted" + againSuffix, Key: KeyEmptyQuoted}},
			Check:       emptyQuoted,
		},
		{
			ID:          "key/get-ignored",
			Description: "a key on a method that is not keyed (the ledger's GET) changes nothing",
			Requirement: "where keyed_methods declares the keyed methods, a GET carrying a key is answered as a plain read, never recorded, replayed or refused",
			Source:      "the profile's keyed_methods; RFC 9110 §9.2.2 (GET is idempotent already)",
			Level:       verdict.LevelMust,
			Labels:      []string{"group:key", "fault:none", "level:must"},
			Needs:       []profile.Capability{profile.CapKeyHeader, profile.CapKeyedMethods},
			Steps: []Step{
				{Name: "get-before", Payload: PayloadLedgerRead},
				{Name: "original"},
				{Name: "get-after", Payload: PayloadLedgerRead},
			},
			Check: getIgnored,
		},
	}
}

// keyRefusal reports whether a class says a key was taken for another operation's.
func keyRefusal(c outcome.Class) bool { return c == outcome.Mismatch || c == outcome.InFlight }

func distinctKeysSameBody(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
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
	succ := 0
	for _, op := range []verdict.Op{a, b} {
		switch {
		case op.Class == outcome.Success:
			succ++
		case op.Class == outcome.ServerError:
			f.example("%s answered %s", op.Step, describe(op))
			f.blame(op, "a success of its own")
			return f.result(verdict.Fail, "the %s key got %s from the target, want a 2xx", op.Step, describe(op))
		case keyRefusal(op.Class):
			f.example("%s answered %s", op.Step, describe(op))
			f.blame(op, "a success of its own")
			return f.result(verdict.Fail, "the %s key was refused with %s (%s): a different key is a different operation", op.Step, describe(op), op.Class)
		case op.Class.Determinate():
			return f.result(verdict.Unknown, "the %s key got %s (%s), not a success: nothing to judge", op.Step, describe(op), op.Class)
		}
	}
	switch most := 1 + allowedEffects(r, p); {
	case n > most:
		f.count(verdict.CatDuplicated, n-most)
		return f.result(verdict.Fail, "%d side effects from two keys (and the first again as the control repeat, which must replay), want at most %d", n, most)
	case succ > n:
		f.count(verdict.CatLost, succ-n)
		if a.Class == outcome.Success && b.Class == outcome.Success && sameResponse(p, a, b) {
			f.example("first: %d %s", a.Status, clip(a.Body))
			f.example("second: %d %s", b.Status, clip(b.Body))
			f.blame(b, "an execution of its own, not the first key's response")
			return f.result(verdict.Fail, "two keys with the same payload: %d side effect(s), and the second key was answered the first key's response", n)
		}
		return f.result(verdict.Fail, "two keys with the same payload: %d successes but %d side effect(s)", succ, n)
	case n == 2 && succ == 2 && sameResponse(p, a, b):
		return f.result(verdict.Pass, "two side effects from two keys; the two responses are the same (the body carries no per-execution id)")
	case n == 2 && succ == 2:
		return f.result(verdict.Pass, "two side effects from two keys, two different responses")
	case n == 2:
		return f.result(verdict.Pass, "two side effects from two keys (%d of the answers timed out or were cut: info)", 2-succ)
	}
	return f.result(verdict.Unknown, "%d side effect(s); the outcome of %d attempt(s) is unknown (info), so whether both executed cannot be told", n, 2-succ)
}

func validNever5xx(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
	if r.LedgerErr != "" {
		return unknownLedger(r)
	}
	var f finding
	var serverErrs, refused, diverged []string
	var serverOps, divergedOps, firstOps []verdict.Op // the answers a FAIL blames
	accepted, acceptedOneChar, maybe := 0, 0, 0
	var lateDiffer []string // repeats that differ but may have arrived past the retention
	for _, shape := range validShapes {
		first, ok1 := stepAnswer(r, string(shape))
		again, ok2 := stepAnswer(r, string(shape)+againSuffix)
		if !ok1 || !ok2 {
			return f.result(verdict.Unknown, "the %s key's steps never answered", shape)
		}
		for _, op := range []verdict.Op{first, again} {
			if op.Class == outcome.ServerError {
				serverErrs = append(serverErrs, fmt.Sprintf("%s (%d characters): %s", shape, len(op.Key), describe(op)))
				serverOps = append(serverOps, op)
				f.example("%s key %s got %s", op.Step, quoteKey(op.Key), describe(op))
				break
			}
		}
		// A repeat that may have arrived after the declared retention may execute anew:
		// one more side effect, and a response of its own.
		start, _ := stepInvokedAt(r, string(shape))
		late := pastRetention(p, start, again.Time)
		switch {
		case first.Class == outcome.Success:
			if shape == KeyOneChar {
				acceptedOneChar++
			} else {
				accepted++
			}
			if late {
				maybe++
			}
			switch {
			case again.Class != outcome.Success || sameResponse(p, again, first):
			case late:
				lateDiffer = append(lateDiffer, string(shape))
			default:
				diverged = append(diverged, string(shape))
				divergedOps, firstOps = append(divergedOps, again), append(firstOps, first)
				f.example("%s: first %d %s, repeat %d %s", shape, first.Status, clip(first.Body), again.Status, clip(again.Body))
			}
		case !first.Class.Determinate():
			// It may have executed; its repeat tells, if it was seen (and, when the repeat
			// was late, may have executed once more).
			if again.Class == outcome.Success {
				accepted++
				if late {
					maybe++
				}
			} else {
				maybe++
			}
		case first.Class != outcome.ServerError:
			refused = append(refused, fmt.Sprintf("%s: %s", shape, describe(first)))
		}
	}
	n := r.Ledger[verdict.LedgerOperation]
	note := ""
	if len(refused) > 0 {
		note = "; refused, not a 5xx: " + strings.Join(refused, ", ")
	}
	replayed := "each repeat replayed"
	if len(lateDiffer) > 0 {
		replayed = "each repeat compared replayed"
		note += fmt.Sprintf("; the repeat of the %s key(s) got a response of its own but %s (not judged)",
			strings.Join(lateDiffer, ", "), mayBeLate("it", p))
	}
	switch {
	case len(serverErrs) > 0:
		for _, op := range serverOps {
			f.blame(op, "a success: the key is valid")
		}
		return f.result(verdict.Fail, "valid keys got a 5xx: %s", strings.Join(serverErrs, "; "))
	case len(diverged) > 0:
		f.count(verdict.CatDiverged, len(diverged))
		for i, op := range divergedOps {
			f.blameAgainst(op, "the first response replayed", &firstOps[i])
		}
		return f.result(verdict.Fail, "the repeat differs from the first response for the %s key(s)", strings.Join(diverged, ", "))
	case n > accepted+acceptedOneChar+maybe:
		f.count(verdict.CatDuplicated, n-accepted-acceptedOneChar-maybe)
		return f.result(verdict.Fail, "%d side effects for %d accepted keys sent twice each: a key executed again", n, accepted+acceptedOneChar)
	case n < accepted:
		// The one-character key may meet an earlier run's inside the retention, so it
		// is the only accepted key allowed to have no side effect of its own.
		f.count(verdict.CatLost, accepted-n)
		return f.result(verdict.Fail, "%d side effects for %d accepted keys: a success without its side effect", n, accepted)
	case accepted+acceptedOneChar == 0 && maybe > 0:
		return f.result(verdict.Unknown, "no key shape was seen accepted (%d unknown outcomes)%s", maybe, note)
	case accepted+acceptedOneChar == 0:
		return f.result(verdict.Unknown, "every key shape was refused: nothing executed to judge%s", note)
	}
	return f.result(verdict.Pass, "no 5xx for %d key shapes (UUID 36, ULID 26, base64url 43, 1 and %d characters); %d side effects, %s%s",
		len(validShapes), p.MaxKeyLen(), n, replayed, note)
}

func emptyQuoted(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
	if r.LedgerErr != "" {
		return unknownLedger(r)
	}
	var f finding
	answers := append(stepAnswers(r, "empty-quoted"), stepAnswers(r, "empty-quoted"+againSuffix)...)
	if v, msg, ev, decided := judgeFixedKey(r, p, answers, `the key ""`); decided {
		return v, msg, ev
	}
	n := r.Ledger[verdict.LedgerOperation]
	refused, succ, seen := 0, 0, 0
	var other []string
	for _, a := range answers {
		switch {
		case !a.Class.Determinate():
			continue
		case a.Class.Refusal():
			refused++
		case a.Class == outcome.Success:
			succ++
		default:
			other = append(other, describe(a))
		}
		seen++
	}
	switch {
	case seen == 0:
		return f.result(verdict.Unknown, "no answer to the empty quoted key was seen (info)")
	case n == 0 && refused == seen:
		first := answers[0]
		for _, a := range answers {
			if a.Class.Determinate() {
				first = a
				break
			}
		}
		return f.result(verdict.Pass, "the key \"\" was refused with %s; nothing executed", describeRefusal(first, outcome.InvalidKey))
	case n >= 2:
		return f.result(verdict.NonStrict, "the key \"\" was accepted and executed as unkeyed: %d side effects", n)
	case n == 1 && succ == 2 && sameBody(p, answers[0].Body, answers[1].Body):
		// Keys taken as opaque strings: "" is a two-character key, used as one. That is
		// the policy key/sf-string reports (INFO) without judging; the draft's sf-string
		// reading makes it the empty key and wants a 4xx, so it is said, not failed.
		return f.result(verdict.Info, "the key \"\" was used as a key: executed once, then replayed (keys taken as opaque strings, the policy key/sf-string reports; read as an sf-string it is the empty key, which the draft has refused with a 4xx)")
	case n > 0:
		return f.result(verdict.NonStrict, "the key \"\" was accepted and executed (%d side effect), want a 4xx", n)
	case len(other) > 0:
		return f.result(verdict.NonStrict, "the key \"\" got %s, want a 4xx refusal", strings.Join(other, ", "))
	}
	return f.result(verdict.NonStrict, "the key \"\" got %d success(es) with no side effect, want a 4xx", succ)
}

// asLedgerRead classes a ledger read's answer by its status alone, as the ledger read
// itself does; an answer not seen whole stays what it was.
func asLedgerRead(g verdict.Op) verdict.Op {
	if g.Class.Determinate() {
		g.Class = outcome.Statuses{}.Classify(outcome.Answer{Status: g.Status})
	}
	return g
}

func getIgnored(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
	if r.LedgerErr != "" {
		return unknownLedger(r)
	}
	var f finding
	before, ok1 := stepAnswer(r, "get-before")
	post, ok2 := stepAnswer(r, "original")
	after, ok3 := stepAnswer(r, "get-after")
	if !ok1 || !ok2 || !ok3 {
		return f.result(verdict.Unknown, "a step never answered")
	}
	// The reads are the ledger's, not the operation's: the operation's outcome rules (a
	// success told by a member only its answers have) do not describe them.
	before, after = asLedgerRead(before), asLedgerRead(after)
	n := r.Ledger[verdict.LedgerOperation]
	method := p.SideEffects.Method
	for _, g := range []verdict.Op{before, after} {
		if g.Class.Determinate() && g.Class != outcome.Success {
			f.example("%s: %s %s", g.Step, describe(g), clip(g.Body))
			return f.result(verdict.Fail, "a %s carrying a key got %s; keyed_methods declares only %s", method, describe(g), strings.Join(p.KeyedMethods, ", "))
		}
	}
	switch {
	case n > 1:
		f.count(verdict.CatDuplicated, n-1)
		return f.result(verdict.Fail, "%d side effects for one %s", n, p.Operation.Method)
	case post.Class == outcome.ServerError:
		return f.result(verdict.Fail, "the %s got %s from the target, want a 2xx", p.Operation.Method, describe(post))
	case keyRefusal(post.Class):
		f.example("%s before the %s: %s %s", method, p.Operation.Method, describe(before), clip(before.Body))
		f.example("%s: %s %s", p.Operation.Method, describe(post), clip(post.Body))
		return f.result(verdict.Fail, "the %s with the key a %s carried before got %s (%s): the %s was recorded under the key", p.Operation.Method, method, describe(post), post.Class, method)
	case post.Class.Determinate() && post.Class != outcome.Success:
		return f.result(verdict.Unknown, "the %s got %s (%s), not a success: nothing to judge", p.Operation.Method, describe(post), post.Class)
	case post.Class == outcome.Success && before.Class == outcome.Success && post.Status == before.Status && sameBody(p, post.Body, before.Body):
		f.count(verdict.CatFabricated, 1)
		return f.result(verdict.Fail, "the %s was answered the %s's response: the %s was stored under the key and replayed", p.Operation.Method, method, method)
	case post.Class == outcome.Success && n == 0:
		f.count(verdict.CatLost, 1)
		return f.result(verdict.Fail, "the %s got %d but the ledger shows no side effect", p.Operation.Method, post.Status)
	case after.Class == outcome.Success && post.Class == outcome.Success && sameBody(p, after.Body, post.Body):
		f.count(verdict.CatLeaked, 1)
		return f.result(verdict.Fail, "the %s carrying the %s's key was answered the %s's stored response", method, p.Operation.Method, p.Operation.Method)
	case after.Class == outcome.Success && replayMarked(after, p):
		return f.result(verdict.Fail, "the %s carrying the key was marked as a replay (%s)", method, p.Expect.ReplayHeader)
	case n == 1 && before.Class == outcome.Success && after.Class == outcome.Success:
		return f.result(verdict.Pass, "the %s with the key before and after the %s was answered as a plain read; the %s executed once", method, p.Operation.Method, p.Operation.Method)
	}
	return f.result(verdict.Unknown, "%d side effect(s); %s before: %s, %s: %s, %s after: %s: an unknown outcome (info) leaves it open",
		n, method, describe(before), p.Operation.Method, describe(post), method, describe(after))
}

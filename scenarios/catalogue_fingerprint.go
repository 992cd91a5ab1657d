package scenarios

import (
	"fmt"
	"strings"

	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/verdict"
)

func fingerprintScenarios() []Scenario {
	return []Scenario{
		{
			ID:          "fingerprint/mismatch",
			Description: "the same key with another payload is refused",
			Requirement: "reuse with another payload gets expect.mismatch (422 by default) and no second side effect",
			Source:      and(srcDraftErrors, srcDraftFingerprint),
			Level:       verdict.LevelMust,
			Labels:      []string{"group:fingerprint", "fault:none", "level:must"},
			Needs:       []profile.Capability{profile.CapAlteredBody},
			Steps:       []Step{{Name: "original"}, {Name: "altered", Payload: PayloadAltered}},
			Check:       mismatchAt("altered"),
		},
		{
			ID:          "fingerprint/mismatch-repeat",
			Description: "the uncorrected changed request fails again on its next try",
			Requirement: "a refused payload is refused every time, never executed or replayed later",
			Source:      srcDraftErrors,
			Level:       verdict.LevelMust,
			Labels:      []string{"group:fingerprint", "fault:none", "level:must"},
			Needs:       []profile.Capability{profile.CapAlteredBody},
			Steps:       []Step{{Name: "original"}, {Name: "altered", Payload: PayloadAltered}, {Name: "altered-again", Payload: PayloadAltered}},
			Check:       mismatchAt("altered-again"),
		},
		{
			ID:          "fingerprint/original-intact",
			Description: "after a mismatch, the original payload still replays the original response",
			Requirement: "a refused payload does not poison the stored record",
			Source:      and(srcDraftFingerprint, srcSeed),
			Level:       verdict.LevelSafety,
			Labels:      []string{"group:fingerprint", "fault:none", "level:safety"},
			Needs:       []profile.Capability{profile.CapAlteredBody},
			Steps:       []Step{{Name: "original"}, {Name: "altered", Payload: PayloadAltered}, {Name: "repeat"}},
			Check:       identicalReplay("original", "repeat"),
		},
		{
			ID:          "fingerprint/each-member",
			Description: fmt.Sprintf("the same key with one member of the body changed at a time (up to %d) is refused each time", profile.MaxChangedMembers),
			Requirement: "every member of the payload is in the fingerprint: reuse with any one member changed gets expect.mismatch, never the original's response (a member left out on purpose is declared in expect.fingerprint_ignores)",
			Source:      and(srcDraftErrors, srcDraftFingerprint),
			Level:       verdict.LevelShould,
			Labels:      []string{"group:fingerprint", "fault:none", "level:should"},
			Needs:       []profile.Capability{profile.CapChangeableBody},
			Steps:       memberSteps(),
			Check:       eachMemberRefused,
		},
		variantScenario("fingerprint/json-key-order", "the same JSON with its keys in reverse order", VariantKeyOrder, profile.CapJSONBody),
		variantScenario("fingerprint/json-whitespace", "the same JSON with other whitespace", VariantWhitespace, profile.CapJSONBody),
		variantScenario("fingerprint/number-spelling", "the same JSON with integers written as 4900.0", VariantNumberSpelling, profile.CapIntegerBody),
		variantScenario("fingerprint/query-string", "the same request with an added query parameter", VariantQueryString, profile.CapQueryString),
		variantScenario("fingerprint/unrelated-header", "the same request with an unrelated header added", VariantUnrelatedHeader, profile.CapRequestHeaders),
	}
}

func variantScenario(id, what string, v Variant, need profile.Capability) Scenario {
	s := Scenario{
		ID:          id,
		Description: what + ": treated as the same request, refused as a mismatch, or executed again",
		Requirement: what + ": reported as the same request, a mismatch or a new execution (the fingerprint is the server's choice); two executions under one key FAIL",
		Source:      srcDraftFingerprint,
		Level:       verdict.LevelPolicy,
		Labels:      []string{"group:fingerprint", "fault:none", "level:policy"},
		Steps:       []Step{{Name: "original"}, {Name: "variant", Variant: v}},
		Check:       variantPolicy,
	}
	if need != "" {
		s.Needs = []profile.Capability{need}
	}
	return s
}

func mismatchAt(step string) Checker {
	return func(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
		var f finding
		orig, v, msg, ev, ok := succeededOriginal(r, &f)
		if !ok {
			return v, msg, ev
		}
		a, _ := stepAnswer(r, step)
		n, allowed := r.Ledger[verdict.LedgerOperation], allowedEffects(r, p)
		if n > allowed {
			f.count(verdict.CatDuplicated, n-allowed)
			f.example("%s got %s", step, describe(a))
			f.blame(a, wantText(p.Expect.Mismatch, outcome.Mismatch)+", no execution")
			return f.result(verdict.Fail, "another payload executed under the same key: %d side effects", n)
		}
		if a.Class == outcome.Mismatch {
			return f.result(verdict.Pass, "%s got %s; one side effect", step, describe(a))
		}
		if unseen(a) {
			return f.result(verdict.Unknown, "%s was not seen (%s): whether it was refused cannot be told", step, describe(a))
		}
		if isSuccess(a) && allowed > 1 {
			return f.result(verdict.Unknown, "%s: nothing to judge", mayBeLate(step, p))
		}
		if isSuccess(a) {
			f.count(verdict.CatLeaked, 1)
			f.example("%s got %d %s", step, a.Status, clip(a.Body))
			f.blameAgainst(a, wantText(p.Expect.Mismatch, outcome.Mismatch), &orig)
			return f.result(verdict.Fail, "another payload was answered %d with the original's response, want %s", a.Status, wantText(p.Expect.Mismatch, outcome.Mismatch))
		}
		f.blame(a, wantText(p.Expect.Mismatch, outcome.Mismatch))
		return f.result(verdict.Fail, "%s got %s, want %s", step, describe(a), wantText(p.Expect.Mismatch, outcome.Mismatch))
	}
}

// variantPolicy reports how the target treats a respelled request (INFO), except that two
// executions under one key are a FAIL whatever the policy.
func variantPolicy(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
	if r.LedgerErr != "" {
		return unknownLedger(r)
	}
	var f finding
	orig, _ := stepAnswer(r, "original")
	if !isSuccess(orig) {
		return f.result(verdict.Unknown, "the original did not succeed (%s)", describe(orig))
	}
	v, _ := stepAnswer(r, "variant")
	n, allowed := r.Ledger[verdict.LedgerOperation], allowedEffects(r, p)
	if n > allowed {
		f.count(verdict.CatDuplicated, n-allowed)
		f.blame(v, "the original's replay or a mismatch refusal, no second execution")
		return f.result(verdict.Fail, "executed again under the same key: %d side effects (variant got %s)", n, describe(v))
	}
	switch {
	case isSuccess(v) && sameResponse(p, v, orig):
		return f.result(verdict.Info, "same request: the original response was replayed")
	case n > 1 && isSuccess(v):
		return f.result(verdict.Unknown, "the variant got %d with a response of its own and executed, but %s: nothing to judge", v.Status, mayBeLate("it", p))
	case v.Class == outcome.Mismatch:
		return f.result(verdict.Info, "different request: refused with %s", describe(v))
	case isSuccess(v):
		f.count(verdict.CatDiverged, 1)
		f.blameAgainst(v, "the original's "+itoa(orig.Status)+" replayed, byte for byte", &orig)
		what := "a body that differs from the original's"
		if sameBody(p, v.Body, orig.Body) {
			what = fmt.Sprintf("the original's body but not its status (%d)", orig.Status)
		}
		return f.result(verdict.Fail, "answered %d with %s, yet nothing executed%s", v.Status, what, uniqueNote(p, orig, v))
	case unseen(v):
		return f.result(verdict.Unknown, "the variant's answer was not seen (%s): its treatment cannot be told", describe(v))
	}
	return f.result(verdict.Info, "answered %s", describe(v))
}

// memberSteps are fingerprint/each-member's steps: the original, then one step per
// changeable member (the runner skips those past the body's last one).
func memberSteps() []Step {
	steps := []Step{{Name: "original"}}
	for i := 1; i <= profile.MaxChangedMembers; i++ {
		steps = append(steps, Step{Name: memberStep(i), ChangeMember: i})
	}
	return steps
}

func memberStep(i int) string { return fmt.Sprintf("member-%d", i) }

// eachMemberRefused judges each changed member's answer: refused as a mismatch (in the
// fingerprint), the original's response (left out of it: NON-STRICT, a SHOULD, since a
// target may scope its fingerprint on purpose and declare so), executed again under the
// key (FAIL), or refused otherwise (a validation of the changed value before the key was
// looked at: nothing to judge for that member).
func eachMemberRefused(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
	var f finding
	orig, v, msg, ev, ok := succeededOriginal(r, &f)
	if !ok {
		return v, msg, ev
	}
	members, all := p.ChangeableMembers(), p.AllChangeableMembers()
	if len(members) == 0 {
		return f.result(verdict.Info, "operation.body has no member to change (every member names the entity, carries the key or is in expect.fingerprint_ignores)")
	}
	var refused, ignored, asRepeat, own, other, notSeen []string
	var ignoredOps, ownOps []verdict.Op
	for i, m := range members {
		a, ok := stepAnswer(r, memberStep(i+1))
		switch {
		case !ok || unseen(a):
			notSeen = append(notSeen, fmt.Sprintf("%s (%s)", m, describe(a)))
		case a.Class == outcome.Mismatch:
			refused = append(refused, m)
		case a.Class == outcome.InFlight:
			// Refused as a repeat in flight, though the original had answered before
			// this step was sent: the target took the changed request for the same one
			// without looking at its body (moov-io/base idempotent answers every key it
			// has seen 412, whatever the payload).
			asRepeat = append(asRepeat, fmt.Sprintf("%s (%s)", m, describe(a)))
		case isSuccess(a) && sameResponse(p, a, orig):
			ignored = append(ignored, m)
			ignoredOps = append(ignoredOps, a)
		case isSuccess(a):
			own = append(own, m)
			ownOps = append(ownOps, a)
		default:
			other = append(other, fmt.Sprintf("%s (%s)", m, describe(a)))
		}
	}
	n, allowed := r.Ledger[verdict.LedgerOperation], allowedEffects(r, p)
	want := wantText(p.Expect.Mismatch, outcome.Mismatch)
	switch {
	case n > allowed:
		f.count(verdict.CatDuplicated, n-allowed)
		for _, a := range ownOps {
			f.blame(a, want+", no execution")
		}
		return f.result(verdict.Fail, "a request with a changed member executed under the same key: %d side effects (changed alone and answered with a response of its own: %s)", n, orNone(own))
	case len(own) > 0 && allowed > 1:
		return f.result(verdict.Unknown, "%s got a response of their own, but %s: nothing to judge", strings.Join(own, ", "), mayBeLate("they", p))
	case len(own) > 0:
		f.count(verdict.CatDiverged, len(own))
		for _, a := range ownOps {
			f.blameAgainst(a, want+" or the original's response", &orig)
		}
		return f.result(verdict.Fail, "with %s changed, the key was answered a success of its own (%d), yet nothing executed", strings.Join(own, ", "), ownOps[0].Status)
	case len(ignored) > 0:
		f.count(verdict.CatLeaked, len(ignored))
		for _, a := range ignoredOps {
			f.blameAgainst(a, want, &orig)
		}
		advice := fmt.Sprintf("if the target leaves it out on purpose, declare expect.fingerprint_ignores: [%s]", strings.Join(ignored, ", "))
		if len(refused) == 0 && len(other) == 0 && len(notSeen) == 0 && len(asRepeat) == 0 {
			// Every member changed was replayed the original: no fingerprint at all,
			// not one that leaves some members out.
			advice = "every member changed got the replay, so the target has no request fingerprint: a key reused for another payload is answered the first payload's result; " + advice
		}
		return f.result(verdict.NonStrict, "the fingerprint ignores %s: the key reused with only that changed got the original's response (%d) instead of %s; %s%s%s",
			strings.Join(ignored, ", "), ignoredOps[0].Status, want, advice, memberNotes(refused, other, notSeen), memberRepeatNote(asRepeat)+unchangedNote(all, members))
	case len(asRepeat) > 0:
		return f.result(verdict.NonStrict, "the key reused with one member changed was refused as a repeat in flight, not with %s, after the original had answered: %s. The target treats the changed request as the same one without looking at its body — it has no request fingerprint (or does not consult it), so a client bug that reuses a key for another payload is never told%s%s",
			want, strings.Join(asRepeat, ", "), memberNotes(refused, other, notSeen), unchangedNote(all, members))
	case len(refused) == 0 && len(notSeen) > 0:
		return f.result(verdict.Unknown, "no changed member was seen refused as a mismatch%s%s", memberNotes(nil, other, notSeen), unchangedNote(all, members))
	case len(refused) == 0:
		return f.result(verdict.Info, "every changed member was refused before the fingerprint could be seen%s%s", memberNotes(nil, other, nil), unchangedNote(all, members))
	}
	return f.result(verdict.Pass, "each changed member was refused with %s and executed nothing: %s%s%s", want, strings.Join(refused, ", "), memberNotes(nil, other, notSeen), unchangedNote(all, members))
}

// unchangedNote names the members past the ones a run changes: what the verdict says
// nothing about.
func unchangedNote(all, changed []string) string {
	if len(all) <= len(changed) {
		return ""
	}
	return fmt.Sprintf("; not changed (a run changes the first %d of the body's %d members; what the verdict says holds for those alone): %s",
		len(changed), len(all), strings.Join(all[len(changed):], ", "))
}

// memberNotes lists the members fingerprint/each-member could not judge.
func memberNotes(refused, other, notSeen []string) string {
	var b strings.Builder
	if len(refused) > 0 {
		fmt.Fprintf(&b, "; refused as a mismatch: %s", strings.Join(refused, ", "))
	}
	if len(other) > 0 {
		fmt.Fprintf(&b, "; refused otherwise (not judged): %s", strings.Join(other, ", "))
	}
	if len(notSeen) > 0 {
		fmt.Fprintf(&b, "; not seen: %s", strings.Join(notSeen, ", "))
	}
	return b.String()
}

// memberRepeatNote lists the members refused as a repeat in flight after the original
// had answered.
func memberRepeatNote(asRepeat []string) string {
	if len(asRepeat) == 0 {
		return ""
	}
	return "; refused as a repeat in flight: " + strings.Join(asRepeat, ", ")
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// succeededOriginal is the start of the checkers that judge what followed a successful
// original: ok false with their UNKNOWN when the ledger could not be read or the original
// did not succeed.
func succeededOriginal(r verdict.Record, f *finding) (orig verdict.Op, v verdict.Verdict, msg string, ev verdict.Evidence, ok bool) {
	if r.LedgerErr != "" {
		v, msg, ev = unknownLedger(r)
		return verdict.Op{}, v, msg, ev, false
	}
	orig, _ = stepAnswer(r, "original")
	if !isSuccess(orig) {
		v, msg, ev = f.result(verdict.Unknown, "the original did not succeed (%s)", describe(orig))
		return orig, v, msg, ev, false
	}
	return orig, "", "", verdict.Evidence{}, true
}

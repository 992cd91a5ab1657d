package scenarios

import (
	"fmt"

	"github.com/idemproof/idemproof/outcome"
)

func fingerprintScenarios() []Scenario {
	return []Scenario{
		{
			ID:          "fingerprint/mismatch",
			Description: "the same key with another payload is refused",
			Requirement: "reuse with another payload gets expect.mismatch (422 by default) and no second side effect",
			Source:      and(srcDraftErrors, srcDraftFingerprint),
			Level:       LevelMust,
			Labels:      []string{"group:fingerprint", "fault:none", "level:must"},
			Needs:       []Capability{CapAlteredBody},
			Steps:       []Step{{Name: "original"}, {Name: "altered", Payload: PayloadAltered}},
			Check:       mismatchAt("altered"),
		},
		{
			ID:          "fingerprint/mismatch-repeat",
			Description: "the uncorrected changed request fails again on its next try",
			Requirement: "a refused payload is refused every time, never executed or replayed later",
			Source:      srcDraftErrors,
			Level:       LevelMust,
			Labels:      []string{"group:fingerprint", "fault:none", "level:must"},
			Needs:       []Capability{CapAlteredBody},
			Steps:       []Step{{Name: "original"}, {Name: "altered", Payload: PayloadAltered}, {Name: "altered-again", Payload: PayloadAltered}},
			Check:       mismatchAt("altered-again"),
		},
		{
			ID:          "fingerprint/original-intact",
			Description: "after a mismatch, the original payload still replays the original response",
			Requirement: "a refused payload does not poison the stored record",
			Source:      and(srcDraftFingerprint, srcSeed),
			Level:       LevelSafety,
			Labels:      []string{"group:fingerprint", "fault:none", "level:safety"},
			Needs:       []Capability{CapAlteredBody},
			Steps:       []Step{{Name: "original"}, {Name: "altered", Payload: PayloadAltered}, {Name: "repeat"}},
			Check:       identicalReplay("original", "repeat"),
		},
		variantScenario("fingerprint/json-key-order", "the same JSON with its keys in reverse order", VariantKeyOrder, CapJSONBody),
		variantScenario("fingerprint/json-whitespace", "the same JSON with other whitespace", VariantWhitespace, CapJSONBody),
		variantScenario("fingerprint/number-spelling", "the same JSON with integers written as 4900.0", VariantNumberSpelling, CapIntegerBody),
		variantScenario("fingerprint/query-string", "the same request with an added query parameter", VariantQueryString, CapQueryString),
		variantScenario("fingerprint/unrelated-header", "the same request with an unrelated header added", VariantUnrelatedHeader, ""),
	}
}

func variantScenario(id, what string, v Variant, need Capability) Scenario {
	s := Scenario{
		ID:          id,
		Description: what + ": treated as the same request, refused as a mismatch, or executed again",
		Requirement: what + ": reported as the same request, a mismatch or a new execution (the fingerprint is the server's choice); two executions under one key FAIL",
		Source:      srcDraftFingerprint,
		Level:       LevelPolicy,
		Labels:      []string{"group:fingerprint", "fault:none", "level:policy"},
		Steps:       []Step{{Name: "original"}, {Name: "variant", Variant: v}},
		Check:       variantPolicy,
	}
	if need != "" {
		s.Needs = []Capability{need}
	}
	return s
}

func mismatchAt(step string) Checker {
	return func(r Record, p *Profile) (Verdict, string, Evidence) {
		if r.LedgerErr != "" {
			return unknownLedger(r)
		}
		var f finding
		orig, _ := r.answer("original")
		if !isSuccess(orig) {
			return f.result(Unknown, "the original did not succeed (%s)", describe(orig))
		}
		a, _ := r.answer(step)
		n, allowed := r.Ledger[LedgerOperation], allowedEffects(r, p)
		if n > allowed {
			f.count(CatDuplicated, n-allowed)
			f.example("%s got %s", step, describe(a))
			f.blame(a, wantText(p.Expect.Mismatch, outcome.Mismatch)+", no execution")
			return f.result(Fail, "another payload executed under the same key: %d side effects", n)
		}
		if a.Class == outcome.Mismatch {
			return f.result(Pass, "%s got %d; one side effect", step, a.Status)
		}
		if unseen(a) {
			return f.result(Unknown, "%s was not seen (%s): whether it was refused cannot be told", step, describe(a))
		}
		if isSuccess(a) && allowed > 1 {
			return f.result(Unknown, "%s: nothing to judge", mayBeLate(step, p))
		}
		if isSuccess(a) {
			f.count(CatLeaked, 1)
			f.example("%s got %d %s", step, a.Status, clip(a.Body))
			f.blameAgainst(a, wantText(p.Expect.Mismatch, outcome.Mismatch), &orig)
			return f.result(Fail, "another payload was answered %d with the original's response, want %s", a.Status, wantText(p.Expect.Mismatch, outcome.Mismatch))
		}
		f.blame(a, wantText(p.Expect.Mismatch, outcome.Mismatch))
		return f.result(Fail, "%s got %s, want %s", step, describe(a), wantText(p.Expect.Mismatch, outcome.Mismatch))
	}
}

// variantPolicy reports how the target treats a respelled request (INFO), except that two
// executions under one key are a FAIL whatever the policy.
func variantPolicy(r Record, p *Profile) (Verdict, string, Evidence) {
	if r.LedgerErr != "" {
		return unknownLedger(r)
	}
	var f finding
	orig, _ := r.answer("original")
	if !isSuccess(orig) {
		return f.result(Unknown, "the original did not succeed (%s)", describe(orig))
	}
	v, _ := r.answer("variant")
	n, allowed := r.Ledger[LedgerOperation], allowedEffects(r, p)
	if n > allowed {
		f.count(CatDuplicated, n-allowed)
		f.blame(v, "the original's replay or a mismatch refusal, no second execution")
		return f.result(Fail, "executed again under the same key: %d side effects (variant got %s)", n, describe(v))
	}
	switch {
	case isSuccess(v) && p.sameResponse(v, orig):
		return f.result(Info, "same request: the original response was replayed")
	case n > 1 && isSuccess(v):
		return f.result(Unknown, "the variant got %d with a response of its own and executed, but %s: nothing to judge", v.Status, mayBeLate("it", p))
	case v.Class == outcome.Mismatch:
		return f.result(Info, "different request: refused with %d", v.Status)
	case isSuccess(v):
		f.count(CatDiverged, 1)
		f.blameAgainst(v, "the original's "+itoa(orig.Status)+" replayed, byte for byte", &orig)
		what := "a body that differs from the original's"
		if p.sameBody(v.Body, orig.Body) {
			what = fmt.Sprintf("the original's body but not its status (%d)", orig.Status)
		}
		return f.result(Fail, "answered %d with %s, yet nothing executed%s", v.Status, what, uniqueNote(p, orig, v))
	case unseen(v):
		return f.result(Unknown, "the variant's answer was not seen (%s): its treatment cannot be told", describe(v))
	}
	return f.result(Info, "answered %s", describe(v))
}

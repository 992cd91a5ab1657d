package scenarios

func scopeScenarios() []Scenario {
	return []Scenario{
		{
			ID:          "scope/other-principal",
			Description: "the same key from another principal executes independently",
			Requirement: "keys are scoped per principal: another principal's request executes and never receives the first one's stored response",
			Source:      and(srcDraftUniqueness, srcBrandur),
			Level:       LevelSafety,
			Labels:      []string{"group:scope", "fault:none", "level:safety"},
			Needs:       []Capability{CapPrincipals},
			Steps:       []Step{{Name: "original"}, {Name: "other", Principal: 1}},
			Check:       independent(""),
		},
		{
			ID:          "scope/other-endpoint",
			Description: "the same key on another operation executes independently",
			Requirement: "keys are scoped per endpoint: the other operation executes and never receives the first one's stored response",
			Source:      and(srcDraftUniqueness, srcSeed),
			Level:       LevelSafety,
			Labels:      []string{"group:scope", "fault:none", "level:safety"},
			Needs:       []Capability{CapOther},
			Steps:       []Step{{Name: "original"}, {Name: "other", Payload: PayloadOther}},
			Check:       independent(LedgerOther),
		},
	}
}

// independent: the "other" step must execute on its own: a 2xx of its own, not the
// original's bytes, no replay marker, and (when ledger is named) one effect in that ledger.
func independent(ledger string) Checker {
	return func(r Record, p *Profile) (Verdict, string, Evidence) {
		var f finding
		orig, _ := r.answer("original")
		other, _ := r.answer("other")
		if !isSuccess(orig) {
			return f.result(Unknown, "the original did not succeed (%s)", describe(orig))
		}
		if isSuccess(other) && (sameBody(other.Body, orig.Body) || replayMarked(other, p) || sameUnique(p, orig, other)) {
			f.count(CatLeaked, 1)
			f.example("original: %d %s", orig.Status, clip(orig.Body))
			f.example("other:    %d %s", other.Status, clip(other.Body))
			f.blame(other, "its own execution, not the original's response")
			return f.result(Fail, "the other request received the original's stored response")
		}
		if unseen(other) {
			return f.result(Unknown, "the other request's answer was not seen (%s): whether it executed on its own cannot be told", describe(other))
		}
		if !isSuccess(other) {
			f.blame(other, "a success of its own")
			return f.result(Fail, "the other request got %s: the key is not scoped independently", describe(other))
		}
		if ledger != "" {
			if r.LedgerErr != "" {
				return unknownLedger(r)
			}
			if n := r.Ledger[ledger]; n != 1 {
				return f.result(Fail, "the other operation's ledger shows %d side effects, want 1", n)
			}
		}
		return f.result(Pass, "executed independently: %d with its own body", other.Status)
	}
}

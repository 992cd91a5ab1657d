package scenarios

func expiryScenarios() []Scenario {
	return []Scenario{
		{
			ID:          "expiry/inside-window",
			Description: "a repeat just inside the declared retention replays",
			Requirement: "a key is honoured for the whole declared retention",
			Source:      and(srcDraftExpiry, srcStripe),
			Level:       LevelMust,
			Labels:      []string{"group:expiry", "fault:none", "level:must", "speed:slow"},
			Needs:       []Capability{CapRetention},
			Steps:       []Step{{Name: "original"}, {Name: "repeat", Wait: WaitInsideWindow}},
			Check:       identicalReplay("original", "repeat"),
		},
		{
			ID:          "expiry/after-window",
			Description: "a repeat after the declared retention executes anew",
			Requirement: "a key expires after the declared retention: the repeat executes for real",
			Source:      srcDraftExpiry,
			Level:       LevelMust,
			Labels:      []string{"group:expiry", "fault:none", "level:must", "speed:slow"},
			Needs:       []Capability{CapRetention},
			Steps:       []Step{{Name: "original"}, {Name: "repeat", Wait: WaitPastWindow}},
			Check:       executedAnew,
		},
	}
}

func executedAnew(r Record, p *Profile) (Verdict, string, Evidence) {
	if r.LedgerErr != "" {
		return unknownLedger(r)
	}
	var f finding
	a, _ := r.answer("original")
	b, _ := r.answer("repeat")
	if !isSuccess(a) {
		return f.result(Unknown, "the original did not succeed (%s)", describe(a))
	}
	n := r.Ledger[LedgerOperation]
	switch {
	case unseen(b):
		return f.result(Unknown, "the repeat's answer was not seen (%s): whether it executed anew cannot be told", describe(b))
	case !isSuccess(b):
		f.blame(b, "a fresh success (a new execution)")
		return f.result(Fail, "the repeat after the window got %s, want a fresh 2xx", describe(b))
	case n == 1:
		f.blameAgainst(b, "a new execution, not the replay", &a)
		return f.result(Fail, "still replayed after the declared %s retention (one side effect)", p.Retention)
	case n > 2:
		f.count(CatDuplicated, n-2)
		return f.result(Fail, "%d side effects from two requests", n)
	}
	return f.result(Pass, "executed anew after the %s window (%d)", p.Retention, b.Status)
}

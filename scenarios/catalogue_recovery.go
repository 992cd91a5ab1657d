package scenarios

func recoveryScenarios() []Scenario {
	return []Scenario{
		{
			ID:          "recovery/crash-after-key",
			Description: "the original is abandoned after the key insert; a retry after the lock timeout executes",
			Requirement: "a stale lock is taken over after lock_timeout: the retry executes exactly once, the key is not wedged",
			Source:      srcBrandur,
			Level:       LevelMust,
			Labels:      []string{"group:recovery", "fault:crash", "level:must", "speed:slow"},
			Needs:       []Capability{CapCrashAfterKey, CapLockTimeout},
			Steps:       []Step{{Name: "original", Hook: HookCrashAfterKey}, {Name: "retry", Wait: WaitPastLock}},
			Check:       exactlyOnce("retry"),
		},
		{
			ID:          "recovery/crash-after-commit",
			Description: "the original is abandoned after the commit; the retry gets the committed result",
			Requirement: "the side effect and the stored response commit together: the retry replays, one side effect",
			Source:      and(srcBrandur, srcSeed),
			Level:       LevelSafety,
			Labels:      []string{"group:recovery", "fault:crash", "level:safety"},
			Needs:       []Capability{CapCrashAfterCommit},
			Steps:       []Step{{Name: "original", Hook: HookCrashAfterCommit}, {Name: "retry"}},
			Check:       exactlyOnce("retry"),
		},
		{
			ID:          "recovery/slow-past-lock",
			Description: "the original outlives the lock timeout and a retry takes over",
			Requirement: "a takeover fences the stale original: still exactly one side effect",
			Source:      and(srcBrandur, srcSeed),
			Level:       LevelSafety,
			Labels:      []string{"group:recovery", "fault:none", "level:safety", "speed:slow"},
			Needs:       []Capability{CapSlow, CapLockTimeout},
			// No request after the original ends: the ledger is read once both finished,
			// and a later request could legitimately open a new retention window.
			Steps: []Step{
				{Name: "original", Hook: HookSlowPastLock, Background: true},
				{Name: "takeover", Wait: WaitPastLock},
			},
			Check: atMostOnce,
		},
	}
}

// atMostOnce: the takeover race may legitimately end with either side answering 2xx,
// but once both finished the ledger must show exactly one effect.
func atMostOnce(r Record, p *Profile) (Verdict, string, Evidence) {
	if r.LedgerErr != "" {
		return unknownLedger(r)
	}
	var f finding
	n := r.Ledger[LedgerOperation]
	orig, _ := r.answer("original")
	take, _ := r.answer("takeover")
	switch {
	case n > 1:
		f.count(CatDuplicated, n-1)
		f.example("original %s, takeover %s", describe(orig), describe(take))
		return f.result(Fail, "the stale original and the takeover both committed: %d side effects", n)
	case n == 0 && (orig.Type == OpOK || take.Type == OpOK):
		f.count(CatLost, 1)
		return f.result(Fail, "a success was delivered but the ledger shows no side effect")
	case take.Status == p.Expect.InFlight && orig.Type != OpOK:
		// The takeover met a live lock: on a loaded machine the original reached the
		// target late, so the takeover came too early to be one.
		return f.result(Unknown, "the takeover got %d (the lock was still live) and the original %s: no takeover to judge", take.Status, describe(orig))
	case orig.Type != OpOK && take.Type != OpOK:
		f.count(CatStuck, 1)
		return f.result(Fail, "neither the original (%s) nor the takeover (%s) succeeded", describe(orig), describe(take))
	}
	return f.result(Pass, "one side effect: original %s, takeover %s", describe(orig), describe(take))
}

package scenarios

func storageScenarios() []Scenario {
	return []Scenario{
		{
			ID:          "storage/business-4xx",
			Description: "a business error for a key: replayed, or executed again",
			Requirement: "the observed policy matches expect.stores_business_errors when declared; reported otherwise",
			Source:      and(srcStripe, srcBrandur),
			Level:       LevelPolicy,
			Labels:      []string{"group:storage", "fault:none", "level:policy"},
			Needs:       []Capability{CapBusiness},
			Steps:       []Step{{Name: "business", Payload: PayloadBusiness}, {Name: "repeat", Payload: PayloadBusiness}},
			Check:       businessStored,
		},
		{
			ID:          "storage/5xx-not-pinned",
			Description: "work failing with 5xx is not stored: the retry executes and succeeds",
			Requirement: "a 5xx is not replayed: the retry re-executes, one side effect",
			Source:      and(srcBrandur, srcStripe),
			Level:       LevelMust,
			Labels:      []string{"group:storage", "fault:none", "level:must"},
			Needs:       []Capability{CapFail},
			Steps:       []Step{{Name: "failing", Hook: HookFail}, {Name: "retry"}},
			Check:       notPinned,
		},
		{
			ID:          "storage/validation-not-stored",
			Description: "a validation error is not stored: the corrected request with the same key executes",
			Requirement: "a request refused before execution leaves the key unused",
			Source:      srcStripe,
			Level:       LevelMust,
			Labels:      []string{"group:storage", "fault:none", "level:must"},
			Needs:       []Capability{CapValidation},
			Steps:       []Step{{Name: "invalid", Payload: PayloadValidation}, {Name: "retry"}},
			Check:       validationNotStored,
		},
	}
}

func businessStored(r Record, p *Profile) (Verdict, string, Evidence) {
	var f finding
	a, _ := r.answer("business")
	b, _ := r.answer("repeat")
	if a.Status != p.Business.Status {
		return f.result(Unknown, "business_error got %s, declared %d: cannot judge", describe(a), p.Business.Status)
	}
	// A replay is told from a re-execution by the declared marker; without one, only a
	// body that differs proves a re-execution (error bodies are often deterministic).
	var stored bool
	switch {
	case b.Status != a.Status:
		stored = false
	case replayMarked(b, p):
		stored = true
	case !sameBody(a.Body, b.Body):
		stored = false
	default:
		return f.result(Info, "repeat got the same %d and body without a replay marker: replayed or re-executed deterministically, cannot tell", b.Status)
	}
	observed := map[bool]string{true: "stored and replayed", false: "executed again"}[stored]
	if d := p.Expect.StoresBusinessErrors; d != nil {
		if *d != stored {
			return f.result(Fail, "business %d %s, declared %s", a.Status, observed, observed2(*d))
		}
		return f.result(Pass, "business %d %s, as declared", a.Status, observed)
	}
	return f.result(Info, "business %d %s", a.Status, observed)
}

func observed2(stored bool) string {
	if stored {
		return "stored"
	}
	return "not stored"
}

func notPinned(r Record, p *Profile) (Verdict, string, Evidence) {
	if r.LedgerErr != "" {
		return unknownLedger(r)
	}
	var f finding
	a, _ := r.answer("failing")
	if a.Status < 500 {
		return f.result(Unknown, "fail_operation did not make the work fail: got %s", describe(a))
	}
	b, _ := r.answer("retry")
	n := r.Ledger[LedgerOperation]
	switch {
	case n > 1:
		f.count(CatDuplicated, n-1)
		return f.result(Fail, "%d side effects for one key", n)
	case b.Status == a.Status:
		f.count(CatStuck, 1)
		return f.result(Fail, "the %d was stored and replayed to the retry", a.Status)
	case b.Type != OpOK:
		return f.result(Fail, "the retry got %s, want a 2xx", describe(b))
	case n == 0:
		f.count(CatLost, 1)
		return f.result(Fail, "the retry got %d but the ledger shows no side effect", b.Status)
	}
	return f.result(Pass, "the %d was not stored: the retry executed (%d), one side effect", a.Status, b.Status)
}

func validationNotStored(r Record, p *Profile) (Verdict, string, Evidence) {
	if r.LedgerErr != "" {
		return unknownLedger(r)
	}
	var f finding
	a, _ := r.answer("invalid")
	if a.Status != p.Validation.Status {
		return f.result(Unknown, "validation_error got %s, declared %d: cannot judge", describe(a), p.Validation.Status)
	}
	b, _ := r.answer("retry")
	n := r.Ledger[LedgerOperation]
	switch {
	case n > 1:
		f.count(CatDuplicated, n-1)
		return f.result(Fail, "%d side effects for one key", n)
	case b.Type != OpOK:
		return f.result(Fail, "the corrected request got %s: the validation error was stored", describe(b))
	case n == 0:
		f.count(CatLost, 1)
		return f.result(Fail, "the corrected request got %d but the ledger shows no side effect", b.Status)
	}
	return f.result(Pass, "not stored: the corrected request executed (%d), one side effect", b.Status)
}

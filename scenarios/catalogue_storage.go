package scenarios

import (
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/verdict"
)

func storageScenarios() []Scenario {
	return []Scenario{
		{
			ID:          "storage/business-4xx",
			Description: "a business error for a key: replayed, or executed again",
			Requirement: "the observed policy matches expect.stores_business_errors when declared; reported otherwise; a business error is never replayed as a success",
			Source:      and(srcStripe, srcBrandur),
			Level:       verdict.LevelPolicy,
			Labels:      []string{"group:storage", "fault:none", "level:policy"},
			Needs:       []profile.Capability{profile.CapBusiness},
			Steps:       []Step{{Name: "business", Payload: PayloadBusiness}, {Name: "repeat", Payload: PayloadBusiness}},
			Settle:      &Settle{Payload: PayloadBusiness},
			Check:       businessStored,
		},
		{
			ID:          "storage/5xx-not-pinned",
			Description: "work failing with 5xx is not stored: the retry executes and succeeds (unless expect.stores_5xx declares it stored)",
			Requirement: "a 5xx is not replayed: the retry re-executes, one side effect; with expect.stores_5xx: true the retry gets the stored 5xx",
			Source:      and(srcBrandur, srcStripe),
			Level:       verdict.LevelMust,
			Labels:      []string{"group:storage", "fault:none", "level:must"},
			Needs:       []profile.Capability{profile.CapFail},
			Steps:       []Step{{Name: "failing", Hook: HookFail}, {Name: "retry"}},
			Settle:      &Settle{},
			Check:       notPinned,
		},
		{
			ID:          "storage/validation-not-stored",
			Description: "a validation error, then the corrected request with the same key: executed, the stored error replayed, or refused as a changed request",
			Requirement: "the observed policy matches expect.stores_validation_errors when declared (Stripe: not stored, the corrected request executes once; stored: the error is replayed, or, where the stored error keeps the invalid request's fingerprint, the corrected request is refused as a changed one); reported otherwise",
			Source:      srcStripe,
			Level:       verdict.LevelPolicy,
			Labels:      []string{"group:storage", "fault:none", "level:policy"},
			Needs:       []profile.Capability{profile.CapValidation},
			Steps:       []Step{{Name: "invalid", Payload: PayloadValidation}, {Name: "retry"}},
			Settle:      &Settle{},
			Check:       validationNotStored,
		},
	}
}

// businessStored reports (or judges against expect.stores_business_errors) whether a
// business error was stored and replayed or executed again. A business error that comes
// back as a success is fabricated whatever the policy.
func businessStored(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
	var f finding
	a, _ := stepAnswer(r, "business")
	b, _ := stepAnswer(r, "repeat")
	if unseen(b) {
		// The settle step repeats the same request: it stands in for a repeat nobody saw.
		if s := settledOf(r, p); s.ran && !unseen(s.last) {
			b = s.last
		}
	}
	switch {
	case unseen(a) || a.Class != outcome.BusinessError:
		return f.result(verdict.Unknown, "business_error got %s, declared %s: cannot judge", describe(a), wantText(p.Business.Status, outcome.BusinessError))
	case unseen(b):
		return f.result(verdict.Unknown, "the repeat's answer was not seen (%s): replay or re-execution cannot be told", describe(b))
	case isSuccess(b):
		f.count(verdict.CatFabricated, 1)
		f.example("business: %d %s", a.Status, clip(a.Body))
		f.example("repeat:   %d %s", b.Status, clip(b.Body))
		f.blameAgainst(b, "the business "+itoa(a.Status)+" again (replayed or executed anew), never a success", &a)
		return f.result(verdict.Fail, "a business %d was answered %d on the repeat (%d body bytes): an error turned into a success", a.Status, b.Status, len(b.Body))
	case b.Class == outcome.InFlight:
		f.count(verdict.CatStuck, 1)
		f.blame(b, "the business "+itoa(a.Status)+" again")
		return f.result(verdict.Fail, "the key is stuck: the repeat after the business %d got %s", a.Status, describe(b))
	case b.Class != a.Class || b.Status != a.Status:
		f.count(verdict.CatDiverged, 1)
		f.example("business: %d %s", a.Status, clip(a.Body))
		f.example("repeat:   %d %s", b.Status, clip(b.Body))
		f.blameAgainst(b, "the business "+itoa(a.Status)+" again", &a)
		return f.result(verdict.Fail, "the repeat of a business %d got %s", a.Status, describe(b))
	}
	// A replay is told from a re-execution by the declared per-execution field, else by
	// the declared marker; without either, only a body that differs proves a
	// re-execution (error bodies are often deterministic).
	ua, okA := uniqueValue(p, a.Body)
	ub, okB := uniqueValue(p, b.Body)
	var stored bool
	switch {
	case okA && okB:
		stored = ua == ub
		if stored && !sameBody(p, a.Body, b.Body) {
			f.count(verdict.CatDiverged, 1)
			f.example("business: %s", clip(a.Body))
			f.example("repeat:   %s", clip(b.Body))
			f.blameAgainst(b, "the stored "+itoa(a.Status)+", byte for byte", &a)
			return f.result(verdict.Fail, "the replay of the business %d (same %s %s) differs from the stored body", a.Status, p.Expect.UniqueField, ua)
		}
	case replayMarked(b, p):
		stored = true
		if !sameBody(p, a.Body, b.Body) {
			f.count(verdict.CatDiverged, 1)
			f.example("business: %s", clip(a.Body))
			f.example("repeat:   %s", clip(b.Body))
			f.blameAgainst(b, "the stored "+itoa(a.Status)+", byte for byte", &a)
			return f.result(verdict.Fail, "the marked replay of the business %d differs from the stored body", a.Status)
		}
	case !sameBody(p, a.Body, b.Body):
		stored = false
	case p.Expect.UniqueField != "":
		return f.result(verdict.Info, "repeat got the same %s and body, without a replay marker and without %s in the body: replayed or re-executed deterministically, cannot tell", describe(b), p.Expect.UniqueField)
	default:
		return f.result(verdict.Info, "repeat got the same %s and body without a replay marker or a declared unique_field: replayed or re-executed deterministically, cannot tell", describe(b))
	}
	if _, v, msg, failed := judgeSettle(r, p, &f, []verdict.Op{a}, stored); failed {
		return v, msg, f.ev
	}
	observed := map[bool]string{true: "stored and replayed", false: "executed again"}[stored]
	if d := p.Expect.StoresBusinessErrors; d != nil {
		if *d && !stored && allowedEffects(r, p) > 1 {
			return f.result(verdict.Unknown, "the repeat may have reached the target after the declared %s retention, where the stored business %d has expired: nothing to judge", p.Retention, a.Status)
		}
		if *d != stored {
			f.blame(b, "the business "+itoa(a.Status)+" "+storedWord(*d)+" (expect.stores_business_errors)")
			return f.result(verdict.Fail, "%s %s, declared %s", refusalName("business", a), observed, storedWord(*d))
		}
		return f.result(verdict.Pass, "%s %s, as declared", refusalName("business", a), observed)
	}
	return f.result(verdict.Info, "%s %s", refusalName("business", a), observed)
}

// refusalName names a refused request's answer for a storage message: "validation 400",
// or, for a refusal inside a 2xx (a JSON-RPC error object in a 200: its status says
// nothing of what it meant), "validation error (in a 200 answer)".
func refusalName(kind string, a verdict.Op) string {
	if a.Status >= 200 && a.Status < 300 {
		return kind + " error (in a " + itoa(a.Status) + " answer)"
	}
	return kind + " " + itoa(a.Status)
}

func storedWord(stored bool) string {
	if stored {
		return "stored"
	}
	return "not stored"
}

// notPinned: a 5xx from work that failed is not stored (the retry executes once), unless
// the profile declares expect.stores_5xx: true (the retry gets the stored 5xx).
func notPinned(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
	if r.LedgerErr != "" {
		return unknownLedger(r)
	}
	var f finding
	a, _ := stepAnswer(r, "failing")
	if a.Class != outcome.ServerError {
		hint := ""
		if a.Class == outcome.ClientError && a.Status >= 200 && a.Status <= 299 {
			hint = " (if that answer is the failure, name it with an outcomes: server_error rule)"
		}
		return f.result(verdict.Unknown, "fail_operation did not make the work fail: got %s%s", describe(a), hint)
	}
	if want, declared := p.FailStatus(); declared && a.Status >= 500 && a.Status != want {
		// (A failure inside a 2xx — a JSON-RPC error an outcome rule classes as a server
		// error — carries no HTTP status to compare.)
		// A failure the hook did not cause (a key the target refuses with a 500, an
		// outage) is no failed work, and its repeat proves nothing about storing one.
		return f.result(verdict.Unknown, "fail_operation did not act: the target answered %s, and the hook asks for %d; a failure the hook did not cause says nothing about whether a failed execution is stored (if the target answers its injected failure with another status, declare that one as fail_operation's value)", describe(a), want)
	}
	b, _ := stepAnswer(r, "retry")
	settle := settledOf(r, p)
	if (unseen(b) || b.Class == outcome.InFlight) && settle.ran {
		// The settle step asks again once every attempt ended: a retry refused while
		// the failing request still ran, or never answered, is not the last word.
		if _, v, msg, failed := judgeSettle(r, p, &f, nil, true); failed {
			if b.Class == outcome.InFlight {
				f.example("retry after the %d got %s", a.Status, describe(b))
			}
			return v, msg, f.ev
		}
		b = settle.last
	}
	n, allowed := r.Ledger[verdict.LedgerOperation], allowedEffects(r, p)
	if n > allowed {
		f.count(verdict.CatDuplicated, n-allowed)
		return f.result(verdict.Fail, "%d side effects for one key, want at most %d", n, allowed)
	}
	if d := p.Expect.Stores5xx; d != nil && *d {
		switch {
		case unseen(b):
			return f.result(verdict.Unknown, "the retry's answer was not seen (%s): whether the %d was replayed cannot be told", describe(b), a.Status)
		case sameResponse(p, a, b):
			if _, v, msg, failed := judgeSettle(r, p, &f, []verdict.Op{a}, true); failed {
				return v, msg, f.ev
			}
			return f.result(verdict.Pass, "the %d was stored and replayed to the retry, as expect.stores_5xx declares", a.Status)
		}
		if allowed > 1 {
			return f.result(verdict.Unknown, "the retry may have reached the target after the declared %s retention, where the stored %d has expired: nothing to judge", p.Retention, a.Status)
		}
		f.blameAgainst(b, "the stored "+itoa(a.Status)+" replayed (expect.stores_5xx)", &a)
		return f.result(verdict.Fail, "the retry got %s; expect.stores_5xx declares the %d stored and replayed", describe(b), a.Status)
	}
	switch {
	case unseen(b):
		return f.result(verdict.Unknown, "the retry's answer was not seen (%s): whether the %d was stored cannot be told", describe(b), a.Status)
	case b.Class == outcome.InFlight:
		f.count(verdict.CatStuck, 1)
		f.blame(b, "a success (the "+itoa(a.Status)+" not stored)")
		return f.result(verdict.Fail, "the key is stuck: the retry after the %d got %s", a.Status, describe(b))
	case sameResponse(p, a, b) || (b.Class == a.Class && b.Status == a.Status):
		f.count(verdict.CatStuck, 1)
		f.blame(b, "a success (the "+itoa(a.Status)+" not stored)")
		return f.result(verdict.Fail, "the %d was stored and replayed to the retry", a.Status)
	case !isSuccess(b):
		f.blame(b, "a success")
		return f.result(verdict.Fail, "the retry got %s, want a success", describe(b))
	case n == 0:
		f.count(verdict.CatLost, 1)
		return f.result(verdict.Fail, "the retry got %d but the ledger shows no side effect", b.Status)
	}
	if _, v, msg, failed := judgeSettle(r, p, &f, []verdict.Op{b}, true); failed {
		return v, msg, f.ev
	}
	return f.result(verdict.Pass, "the %s was not stored: the retry executed (%s), %s", describe(a), describe(b), sideEffects(n))
}

// validationNotStored reports (or judges against expect.stores_validation_errors)
// whether a request refused before execution was stored under its key. Stored, the
// corrected request with the same key does not execute: it gets the stored refusal
// (replayed), or, where the target keeps the invalid request's fingerprint with it, a
// mismatch (refused as a changed request: it is another request than the stored one).
// Either is the stored policy working; only an execution is "not stored".
func validationNotStored(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
	if r.LedgerErr != "" {
		return unknownLedger(r)
	}
	var f finding
	a, _ := stepAnswer(r, "invalid")
	// Where statuses coincide (400 for a missing key and a validation error) the class
	// may be the other refusal: any refusal answers the invalid request.
	if !a.Class.Refusal() || a.Class == outcome.InFlight {
		return f.result(verdict.Unknown, "validation_error got %s, declared %s: cannot judge", describe(a), wantText(p.Validation.Status, outcome.ValidationError))
	}
	b, _ := stepAnswer(r, "retry")
	if settle := settledOf(r, p); (unseen(b) || b.Class == outcome.InFlight) && settle.ran {
		if _, v, msg, failed := judgeSettle(r, p, &f, nil, true); failed {
			return v, msg, f.ev
		}
		b = settle.last
	}
	n, allowed := r.Ledger[verdict.LedgerOperation], allowedEffects(r, p)
	var stored, refusedChanged bool
	switch {
	case n > allowed:
		f.count(verdict.CatDuplicated, n-allowed)
		return f.result(verdict.Fail, "%d side effects for one key", n)
	case unseen(b):
		return f.result(verdict.Unknown, "the corrected request's answer was not seen (%s): cannot tell", describe(b))
	case b.Class == outcome.InFlight:
		f.count(verdict.CatStuck, 1)
		f.blame(b, "a success or the stored "+itoa(a.Status))
		return f.result(verdict.Fail, "the key is stuck: the corrected request after the %d got %s", a.Status, describe(b))
	case isSuccess(b) && n == 0:
		f.count(verdict.CatLost, 1)
		return f.result(verdict.Fail, "the corrected request got %d but the ledger shows no side effect", b.Status)
	case isSuccess(b):
		stored = false
	case b.Class == a.Class && b.Status == a.Status && n == 0:
		stored = true
	case b.Class == outcome.Mismatch && n == 0:
		// The stored refusal carries the invalid request's fingerprint: the corrected
		// request is another request under a used key.
		stored, refusedChanged = true, true
	default:
		f.blame(b, "a success, or the stored "+itoa(a.Status))
		return f.result(verdict.Fail, "the corrected request got %s (the invalid one got %d)", describe(b), a.Status)
	}
	if _, v, msg, failed := judgeSettle(r, p, &f, []verdict.Op{b}, true); failed {
		return v, msg, f.ev
	}
	observed := "not stored: the corrected request executed (" + itoa(b.Status) + "), " + sideEffects(n)
	switch {
	case refusedChanged:
		observed = "stored: the corrected request was refused as a changed request (" + describe(b) + ": the stored error keeps the invalid request's fingerprint) and did not execute"
	case stored:
		observed = "stored: the corrected request got the stored " + itoa(b.Status) + " and did not execute"
	}
	if d := p.Expect.StoresValidationErrors; d != nil {
		if *d && !stored && allowed > 1 {
			return f.result(verdict.Unknown, "the corrected request may have reached the target after the declared %s retention, where the stored %d has expired: nothing to judge", p.Retention, a.Status)
		}
		if *d != stored {
			f.blame(b, "the validation "+itoa(a.Status)+" "+storedWord(*d)+" (expect.stores_validation_errors)")
			return f.result(verdict.Fail, "%s %s; declared %s", refusalName("validation", a), observed, storedWord(*d))
		}
		return f.result(verdict.Pass, "%s %s, as declared", refusalName("validation", a), observed)
	}
	return f.result(verdict.Info, "%s %s", refusalName("validation", a), observed)
}

// sideEffects words a passing count: one, or more where attempts past the retention
// window were allowed to execute anew.
func sideEffects(n int) string {
	if n == 1 {
		return "one side effect"
	}
	return itoa(n) + " side effects (a late attempt past the retention may execute anew)"
}

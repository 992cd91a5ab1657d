package scenarios

import (
	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/verdict"
)

func scopeScenarios() []Scenario {
	return []Scenario{
		{
			ID:          "scope/other-principal",
			Description: "the same key from another principal executes independently",
			Requirement: "keys are scoped per principal: another principal's request executes and never receives the first one's stored response; the first principal's repeat afterwards (the control) still replays its own",
			Source:      and(srcDraftUniqueness, srcBrandur),
			Level:       verdict.LevelSafety,
			Labels:      []string{"group:scope", "fault:none", "level:safety"},
			Needs:       []profile.Capability{profile.CapPrincipals},
			Steps:       []Step{{Name: "original"}, {Name: "other", Principal: 1}, {Name: ControlStep}},
			Check:       honouredAfter(controlPair{"original", "other", ControlStep, "the other principal's request"}, independent("")),
		},
		{
			ID:          "scope/other-principal-in-flight",
			Description: "the same key from another principal while the original still runs executes independently",
			Requirement: "keys are scoped per principal while in flight too: another principal's request is neither refused as in flight nor made to wait for and given the first one's response; the first principal's repeat afterwards (the control) still replays its own",
			Source:      and(srcDraftUniqueness, srcBrandur),
			Level:       verdict.LevelSafety,
			Labels:      []string{"group:scope", "fault:before-upstream", "level:safety"},
			Needs:       []profile.Capability{profile.CapPrincipals, profile.CapSlow},
			// As the in-flight scenarios: the original runs slowly in the background and the
			// other principal's request is delayed by the proxy to arrive during it.
			Faults: []FaultOn{{Step: "other", Fault: faultproxy.FaultSpec{Type: faultproxy.FaultBeforeDelay}, DurationOf: QuarterSlow}},
			Steps: []Step{
				{Name: "original", Hook: HookSlow, Background: true},
				{Name: "other", Principal: 1},
				{Name: "after", Wait: WaitBackground},
			},
			// "after", the original's repeat once it ended, is the control.
			Check: honouredAfter(controlPair{"original", "other", "after", "the other principal's request"}, otherPrincipalInFlight),
		},
		{
			ID:          "scope/other-entity",
			Description: "the same key for another entity is refused, or executes for that entity; never the first entity's response",
			Requirement: "a key reused for another entity (another order in the body or the path) never gets the first entity's stored response while the other entity's operation does not happen: it is refused as another payload, or, where the entity is in the path (another endpoint), executes for it; the first entity's repeat afterwards (the control) still replays its own",
			Source:      and(srcDraftUniqueness, srcDraftErrors),
			Level:       verdict.LevelSafety,
			Labels:      []string{"group:scope", "fault:none", "level:safety"},
			Needs:       []profile.Capability{profile.CapEntityRequest},
			Steps:       []Step{{Name: "original"}, {Name: "other", OtherEntity: true}, {Name: ControlStep}},
			Check:       honouredAfter(controlPair{"original", "other", ControlStep, "the request for the other entity"}, otherEntity),
		},
		{
			ID:          "scope/other-endpoint",
			Description: "the same key on another operation executes independently",
			Requirement: "keys are scoped per endpoint: the other operation executes and never receives the first one's stored response; the first operation's repeat afterwards (the control) still replays its own",
			Source:      and(srcDraftUniqueness, srcSeed),
			Level:       verdict.LevelSafety,
			Labels:      []string{"group:scope", "fault:none", "level:safety"},
			Needs:       []profile.Capability{profile.CapOther},
			Steps:       []Step{{Name: "original"}, {Name: "other", Payload: PayloadOther}, {Name: ControlStep}},
			Check:       honouredAfter(controlPair{"original", "other", ControlStep, "the other operation's request"}, independent(verdict.LedgerOther)),
		},
	}
}

// independent: the "other" step must execute on its own: a 2xx of its own, not the
// original's bytes, no replay marker, and (when ledger is named) one effect in that ledger.
func independent(ledger string) Checker {
	return func(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
		var f finding
		orig, _ := stepAnswer(r, "original")
		other, _ := stepAnswer(r, "other")
		if !isSuccess(orig) {
			if ledger == "" && gatewayStatus(orig.Status) && isSuccess(other) && !replayMarked(other, p) {
				return gatewayOriginal(r, p, &f, orig, other)
			}
			return f.result(verdict.Unknown, "the original did not succeed (%s)", describe(orig))
		}
		if isSuccess(other) && (sameBody(p, other.Body, orig.Body) || replayMarked(other, p) || sameUnique(p, orig, other)) {
			f.count(verdict.CatLeaked, 1)
			f.example("original: %d %s", orig.Status, clip(orig.Body))
			f.example("other:    %d %s", other.Status, clip(other.Body))
			f.blame(other, "its own execution, not the original's response")
			return f.result(verdict.Fail, "the other request received the original's stored response")
		}
		if unseen(other) {
			return f.result(verdict.Unknown, "the other request's answer was not seen (%s): whether it executed on its own cannot be told", describe(other))
		}
		switch {
		case !isSuccess(other) && keyRefusal(other.Class) && ledger == verdict.LedgerOther:
			// Shared across endpoints, and refused as the key's reuse: nothing executes
			// twice and nothing leaks (Stripe scopes keys per account this way).
			return f.result(verdict.Info, "keys are shared across endpoints: the other operation's request with the key was refused as its reuse (%s); safe, but that operation needs a key of its own", describe(other))
		case !isSuccess(other) && keyRefusal(other.Class):
			f.blame(other, "a success of its own")
			return f.result(verdict.Fail, "the other request got %s: the key is not scoped independently", describe(other))
		case !isSuccess(other):
			// A 404 or 403 says who may see the entity, not how the key is scoped
			// (entity_setup creates it as the first principal).
			return f.result(verdict.Info, "the other request got %s, which is no refusal of the key (the entity may be the first principal's own, or the request invalid for it): its scope cannot be judged", describe(other))
		}
		if ledger != "" {
			if r.LedgerErr != "" {
				return unknownLedger(r)
			}
			if n := r.Ledger[ledger]; n != 1 {
				return f.result(verdict.Fail, "the other operation's ledger shows %d side effects, want 1", n)
			}
			return f.result(verdict.Pass, "executed independently: %d with its own body, one side effect in the other operation's ledger", other.Status)
		}
		return otherPrincipalExecuted(r, p, &f, orig, other)
	}
}

// otherPrincipalExecuted judges the other principal's success that did not look like the
// original's response. Bytes of its own are no proof on their own: a leaked stored
// response with a per-response member (a request id) differs too. Proof is a
// per-execution value of its own (expect.unique_field), or the ledger counting both.
// The ledger is read as the first principal; a target whose ledgers are per principal
// counts only the original there, which cannot be told from a leak without the value.
func otherPrincipalExecuted(r verdict.Record, p *profile.Profile, f *finding, orig, other verdict.Op) (verdict.Verdict, string, verdict.Evidence) {
	ua, okA := uniqueValue(p, orig.Body)
	ub, okB := uniqueValue(p, other.Body)
	if okA && okB && ua != ub {
		return f.result(verdict.Pass, "executed independently: %d with its own %s (%s, the original's %s)", other.Status, p.Expect.UniqueField, clipValue(ub), clipValue(ua))
	}
	if r.LedgerErr != "" {
		return unknownLedger(r)
	}
	switch n, most := r.Ledger[verdict.LedgerOperation], 1+allowedEffects(r, p); {
	case n == 2:
		return f.result(verdict.Pass, "executed independently: %d with its own body, and the ledger counts both requests (2 side effects)", other.Status)
	case n > most:
		f.count(verdict.CatDuplicated, n-most)
		return f.result(verdict.Fail, "%d side effects for two requests, one per principal (and the first one's control repeat, which must replay): want at most %d", n, most)
	case n == 0:
		f.count(verdict.CatLost, 1)
		f.blame(orig, "a success with its side effect")
		return f.result(verdict.Fail, "the original got %d but the ledger shows no side effect", orig.Status)
	}
	return f.result(verdict.Unknown, "the other principal got %d with a body of its own, but the ledger shows 1 side effect: either its ledger is its own (read here as the first principal) or it got the original's response with per-response members changed; declare expect.unique_field to tell", other.Status)
}

// gatewayOriginal judges the other principal's success when a gateway in front of the
// target answered the original (502, 503, 504: a read timeout shorter than the work, a
// load shedder), so there are no bytes of the original's to tell a leak by. The ledger
// still tells: two side effects for the two requests are two executions, one each.
func gatewayOriginal(r verdict.Record, p *profile.Profile, f *finding, orig, other verdict.Op) (verdict.Verdict, string, verdict.Evidence) {
	if r.LedgerErr != "" {
		return unknownLedger(r)
	}
	switch n, most := r.Ledger[verdict.LedgerOperation], 1+allowedEffects(r, p); {
	case n == 2:
		return f.result(verdict.Pass, "executed independently: %d, and the ledger counts both requests (2 side effects); the original's answer was a gateway's %d", other.Status, orig.Status)
	case n > most:
		f.count(verdict.CatDuplicated, n-most)
		return f.result(verdict.Fail, "%d side effects for two requests, one per principal (and the first one's control repeat, which must replay): want at most %d", n, most)
	default:
		return f.result(verdict.Unknown, "the original's answer was a gateway's %d, so its bytes cannot be compared with the other principal's %d, and the ledger shows %d side effect(s), not one per request", orig.Status, other.Status, n)
	}
}

// clipValue shows a JSON value in a message, cut after 40 bytes.
func clipValue(raw string) string {
	if len(raw) > 40 {
		return raw[:40] + "…"
	}
	return raw
}

// otherPrincipalInFlight is independent("") for a request that met the original in
// flight: a definite leak or refusal FAILs however the two met, but a PASS needs the
// other request to have reached the target before the original could have committed
// (else it is only scope/other-principal again).
func otherPrincipalInFlight(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
	v, msg, ev := independent("")(r, p)
	if v != verdict.Pass {
		return v, msg, ev
	}
	if _, _, during := overlapOf(r, p, "other"); !during {
		return verdict.Unknown, "the other principal's request reached the target only after the original could have committed, so the in-flight case was not exercised (the sequential case is scope/other-principal); it saw: " + msg, ev
	}
	return verdict.Pass, "during the original: " + msg, ev
}

// otherEntity judges a key reused for another entity. The first entity's response for
// it, with nothing done for the other entity, is a leak: a client is told its refund of
// the second order happened. A refusal (another payload) passes. An execution of its own
// passes where the entity is in the path (another endpoint); where it is only in the
// body, it is another payload executed under the key, as fingerprint/mismatch judges it.
func otherEntity(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
	var f finding
	orig, v, msg, ev, ok := succeededOriginal(r, &f)
	if !ok {
		return v, msg, ev
	}
	other, _ := stepAnswer(r, "other")
	global := p.SideEffects.Global()
	nA, nB := r.Ledger[verdict.LedgerOperation], r.Ledger[verdict.LedgerOtherEntity]
	if global {
		nA, nB = min(nA, 1), max(nA-1, 0) // one count for both: the first entity's effect first
	}
	allowed := allowedEffects(r, p)
	switch {
	case global && r.Ledger[verdict.LedgerOperation] > allowed+1:
		f.count(verdict.CatDuplicated, r.Ledger[verdict.LedgerOperation]-allowed-1)
		return f.result(verdict.Fail, "%d side effects from two requests, one per entity", r.Ledger[verdict.LedgerOperation])
	case unseen(other):
		return f.result(verdict.Unknown, "the request for the other entity was not seen (%s): what it did cannot be told", describe(other))
	case !global && nA > allowed:
		f.count(verdict.CatDuplicated, nA-allowed)
		f.blame(other, "a refusal or an execution for the other entity")
		return f.result(verdict.Fail, "the request for another entity executed again for the first one: %d side effects there", nA)
	case isSuccess(other) && nB == 0 && (sameResponse(p, other, orig) || replayMarked(other, p) || sameUnique(p, orig, other)):
		f.count(verdict.CatLeaked, 1)
		f.blameAgainst(other, "a refusal ("+wantText(p.Expect.Mismatch, outcome.Mismatch)+") or an execution for the other entity", &orig)
		return f.result(verdict.Fail, "the key reused for another entity got the first entity's response (%d), and nothing happened for the other entity: its client is told an operation happened that did not", other.Status)
	case isSuccess(other) && nB == 0:
		f.count(verdict.CatLost, 1)
		f.blame(other, "a side effect for the other entity")
		return f.result(verdict.Fail, "the request for another entity got %d, but its ledger shows no side effect", other.Status)
	case isSuccess(other) && nB > 1:
		f.count(verdict.CatDuplicated, nB-1)
		return f.result(verdict.Fail, "%d side effects for the other entity from one request", nB)
	case isSuccess(other) && p.EntityInPath():
		return f.result(verdict.Pass, "executed for the other entity (%d, one side effect there): the entity is in the path, another endpoint with a key scope of its own", other.Status)
	case isSuccess(other):
		f.count(verdict.CatDuplicated, 1)
		f.blame(other, wantText(p.Expect.Mismatch, outcome.Mismatch)+": another payload under the key")
		return f.result(verdict.Fail, "another payload (the other entity in the body) executed under the same key, as a new operation: want %s", wantText(p.Expect.Mismatch, outcome.Mismatch))
	case keyRefusal(other.Class):
		return f.result(verdict.Pass, "refused with %s: the key's first use was for another entity; nothing executed for it", describe(other))
	}
	return f.result(verdict.Info, "the request for the other entity got %s (refused before the key, or the entity does not exist): nothing to judge", describe(other))
}

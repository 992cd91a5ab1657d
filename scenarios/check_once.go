package scenarios

import (
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/verdict"
)

// exactlyOnce is the checker of every "the retry gets the committed result" scenario:
// one side effect (window-aware), the final step answered with a success, and — when the
// proxy buffered what the upstream committed — the same status and body bytes. A final
// answer nobody saw (a timeout) proves nothing: the settle step decides where the
// scenario has one, else the result is UNKNOWN.
func exactlyOnce(final string) Checker {
	return func(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
		if r.LedgerErr != "" {
			return unknownLedger(r)
		}
		var f finding
		n, allowed := r.Ledger[verdict.LedgerOperation], allowedEffects(r, p)
		if n > allowed {
			f.count(verdict.CatDuplicated, n-allowed)
			f.example("ledger shows %d side effects for one key (allowed %d)", n, allowed)
			if ans, ok := stepAnswer(r, final); ok {
				f.blame(ans, "the committed response, no second execution")
			}
			return f.result(verdict.Fail, "%s%d side effects for one key, want %d", keyIgnored(r, n), n, allowed)
		}
		ans, ok := stepAnswer(r, final)
		if !ok {
			return f.result(verdict.Unknown, "step %q never answered", final)
		}
		witness := final
		settle := settledOf(r, p)
		// A timed-out final attempt, or one refused while a duplicate delivery may still
		// have been running, is not the last word when the settle step asked again.
		if (unseen(ans) || ans.Class == outcome.InFlight) && settle.ran {
			ans, witness = settle.last, "the settle retry"
		}
		if witness != final && (unseen(ans) || ans.Class == outcome.InFlight) {
			_, v, msg, _ := judgeSettle(r, p, &f, nil, true)
			return v, msg, f.ev
		}
		switch {
		case unseen(ans):
			return f.result(verdict.Unknown, "%s was not seen (%s): whether it got the committed response cannot be told", final, describe(ans))
		case ans.Class == outcome.InFlight && givenUpWhileRunning(r, p) > 0:
			// The client gave up on an attempt before the target answered it: the
			// target may still be working on it, so "in flight" may be the truth.
			return f.result(verdict.Unknown, "%s got %s, but %d earlier attempt(s) ended before the target's result (given up by the client, still at work when a later attempt arrived, or lost while an MCP stream closed to be polled still waited for it): the original may still be running", witness, describe(ans), givenUpWhileRunning(r, p))
		case ans.Class == outcome.InFlight:
			f.count(verdict.CatStuck, 1)
			f.example("%s still answered %d after the original finished", final, ans.Status)
			f.blame(ans, "the committed success")
			return f.result(verdict.Fail, "the key is stuck: %s got %s after the original finished", witness, describe(ans))
		case !isSuccess(ans):
			f.example("%s answered %s", witness, describe(ans))
			f.blame(ans, "the committed success")
			if n > 0 {
				// Something committed: the answer that should replay it is another class.
				f.count(verdict.CatDiverged, 1)
			}
			return f.result(verdict.Fail, "%s got %s, want the committed success", witness, describe(ans))
		}
		if n == 0 {
			if upstreamCalls(r) == 0 {
				f.count(verdict.CatFabricated, 1)
				f.blame(ans, "no success without an execution")
				return f.result(verdict.Fail, "%s got %d but nothing reached the target and the ledger is empty", witness, ans.Status)
			}
			f.count(verdict.CatLost, 1)
			f.blame(ans, "a success with its side effect")
			return f.result(verdict.Fail, "%s got %d but the ledger shows no side effect", witness, ans.Status)
		}
		if n > 1 {
			// More than one effect, each allowed: an attempt came after the declared
			// retention, where the key may start anew. Nothing shows whether the key held
			// inside a window, so nothing is proven (never "one side effect").
			return f.result(verdict.Unknown, "%d side effects: %s; a retention that outlasts the scenario (retention, against client_timeout and the holds) lets it judge", n, mayBeLate(witness, p))
		}
		body, status, buffered := committedBody(r, p)
		if buffered && (!sameStatus(p, ans.Status, status) || !sameBody(p, ans.Body, body)) {
			if allowed > 1 {
				return f.result(verdict.Unknown, "%s: nothing to judge", mayBeLate(witness, p))
			}
			committed := verdict.Op{Status: status, Body: body}
			f.count(verdict.CatDiverged, 1)
			f.example("committed %d %s", status, clip(body))
			f.example("%s got %d %s", witness, ans.Status, clip(ans.Body))
			f.blameAgainst(ans, "the committed "+itoa(status)+", byte for byte", &committed)
			return f.result(verdict.Fail, "%s differs from the committed response%s", witness, uniqueNote(p, committed, ans))
		}
		if witness == final {
			if _, v, msg, failed := judgeSettle(r, p, &f, []verdict.Op{ans}, true); failed {
				return v, msg, f.ev
			}
		}
		return f.result(verdict.Pass, "%s", onceMessage(r, &f, final, witness, ans, buffered))
	}
}

// onceMessage says what the passing run showed, in words true for how it went: a lost
// response recovered with the committed body (only where the proxy saw that body), a
// request stopped before the target and executed by the retry, or attempts that ended
// without an answer.
func onceMessage(r verdict.Record, f *finding, final, witness string, ans verdict.Op, buffered bool) string {
	lost := 0
	for _, op := range r.History {
		counted := op.Step != SettleStep && (op.Step != final || witness != final)
		if op.Type != verdict.OpInvoke && counted && (unseen(op) || op.Class == outcome.ServerError) {
			lost++
		}
	}
	stopped := min(stoppedBefore(r), lost)
	f.count(verdict.CatRecovered, lost-stopped)
	switch {
	case lost == 0:
		return "one side effect; " + witness + " got " + itoa(ans.Status)
	case buffered:
		return "one side effect; " + itoa(lost) + " lost response(s) recovered: " + witness + " got " + itoa(ans.Status) + " with the committed body"
	case stopped == lost:
		return "one side effect; the request was stopped before the target (" + itoa(stopped) + " attempt(s)) and " + witness + " executed it once (" + itoa(ans.Status) + ")"
	}
	return "one side effect; " + itoa(lost) + " attempt(s) ended without an answer, " + witness + " got " + itoa(ans.Status)
}

// identicalReplay checks a plain repeat: one effect, and the repeat's status and body
// bytes equal the first response.
func identicalReplay(first, repeat string) Checker {
	return func(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
		if r.LedgerErr != "" {
			return unknownLedger(r)
		}
		var f finding
		a, okA := stepAnswer(r, first)
		b, okB := stepAnswer(r, repeat)
		switch {
		case !okA || unseen(a):
			return f.result(verdict.Unknown, "the original's answer was not seen (%s): nothing to replay", describe(a))
		case !isSuccess(a):
			return f.result(verdict.Unknown, "the original did not succeed (%s), nothing to replay", describe(a))
		}
		n, allowed := r.Ledger[verdict.LedgerOperation], allowedEffects(r, p)
		if n > allowed {
			f.count(verdict.CatDuplicated, n-allowed)
			if okB {
				f.blame(b, "the replay, no second execution")
			}
			return f.result(verdict.Fail, "%s%d side effects for one key, want %d", keyIgnored(r, n), n, allowed)
		}
		if n == 0 {
			f.count(verdict.CatLost, 1)
			f.blame(a, "a success with its side effect")
			return f.result(verdict.Fail, "%s got %d but the ledger shows no side effect", first, a.Status)
		}
		switch {
		case !okB || unseen(b):
			return f.result(verdict.Unknown, "the repeat's answer was not seen (%s): whether it replayed cannot be told", describe(b))
		case !sameResponse(p, a, b) && allowed > 1:
			return f.result(verdict.Unknown, "%s: nothing to judge", mayBeLate("the repeat", p))
		case b.Class == outcome.InFlight:
			f.count(verdict.CatStuck, 1)
			f.blame(b, "the replay of the "+itoa(a.Status))
			return f.result(verdict.Fail, "the key is stuck: the repeat after the original's %d got %s", a.Status, describe(b))
		case !sameResponse(p, a, b):
			f.count(verdict.CatDiverged, 1)
			f.example("%s: %d %s", first, a.Status, clip(a.Body))
			f.example("%s: %d %s", repeat, b.Status, clip(b.Body))
			f.blameAgainst(b, "the first "+itoa(a.Status)+" replayed, byte for byte", &a)
			if !isSuccess(b) {
				return f.result(verdict.Fail, "the replay of a %d got %s", a.Status, describe(b))
			}
			return f.result(verdict.Fail, "the replay differs from the first response%s", uniqueNote(p, a, b))
		}
		return f.result(verdict.Pass, "one side effect; the replay has the same status %d and %d body bytes", b.Status, len(b.Body))
	}
}

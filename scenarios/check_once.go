package scenarios

// exactlyOnce is the checker of every "the retry gets the committed result" scenario:
// one side effect (window-aware), the final step answered 2xx, and — when the proxy
// buffered what the upstream committed — the same status and body bytes.
func exactlyOnce(final string) Checker {
	return func(r Record, p *Profile) (Verdict, string, Evidence) {
		if r.LedgerErr != "" {
			return unknownLedger(r)
		}
		var f finding
		n, allowed := r.Ledger[LedgerOperation], allowedEffects(r, p)
		if n > allowed {
			f.count(CatDuplicated, n-allowed)
			f.example("ledger shows %d side effects for one key (allowed %d)", n, allowed)
			return f.result(Fail, "%s%d side effects for one key, want %d", keyIgnored(r, n), n, allowed)
		}
		ans, ok := r.answer(final)
		if !ok {
			return f.result(Unknown, "step %q never answered", final)
		}
		if ans.Type != OpOK {
			if ans.Status == p.Expect.InFlight {
				f.count(CatStuck, 1)
				f.example("%s still answered %d after the original finished", final, ans.Status)
				return f.result(Fail, "the key is stuck: %s got %d", final, ans.Status)
			}
			f.example("%s answered %s", final, describe(ans))
			return f.result(Fail, "%s got %s, want the committed 2xx", final, describe(ans))
		}
		if n == 0 {
			if r.upstreamCalls() == 0 {
				f.count(CatFabricated, 1)
				return f.result(Fail, "%s got %d but nothing reached the target and the ledger is empty", final, ans.Status)
			}
			f.count(CatLost, 1)
			return f.result(Fail, "%s got %d but the ledger shows no side effect", final, ans.Status)
		}
		if body, status, ok := r.committedBody(); ok {
			if (ans.Status != status || !sameBody(ans.Body, body)) && allowed > 1 {
				return f.result(Unknown, "%s may have reached the target after the declared %s retention, where a new execution is allowed: nothing to judge", final, p.Retention)
			}
			if ans.Status != status || !sameBody(ans.Body, body) {
				f.count(CatDiverged, 1)
				f.example("committed %d %s", status, clip(body))
				f.example("%s got %d %s", final, ans.Status, clip(ans.Body))
				return f.result(Fail, "%s differs from the committed response", final)
			}
		}
		lost := 0
		for _, op := range r.History {
			if op.Type == OpInfo {
				lost++
			}
		}
		f.count(CatRecovered, lost)
		if lost > 0 {
			return f.result(Pass, "one side effect; %d lost response(s) recovered, %s got %d with the committed body", lost, final, ans.Status)
		}
		return f.result(Pass, "one side effect; %s got %d", final, ans.Status)
	}
}

// identicalReplay checks a plain repeat: one effect, and the repeat's status and body
// bytes equal the first response.
func identicalReplay(first, repeat string) Checker {
	return func(r Record, p *Profile) (Verdict, string, Evidence) {
		if r.LedgerErr != "" {
			return unknownLedger(r)
		}
		var f finding
		a, okA := r.answer(first)
		b, okB := r.answer(repeat)
		if !okA || !okB || a.Type != OpOK {
			return f.result(Unknown, "the original did not succeed (%s), nothing to replay", describe(a))
		}
		n, allowed := r.Ledger[LedgerOperation], allowedEffects(r, p)
		if n > allowed {
			f.count(CatDuplicated, n-allowed)
			return f.result(Fail, "%s%d side effects for one key, want %d", keyIgnored(r, n), n, allowed)
		}
		if (b.Status != a.Status || !sameBody(a.Body, b.Body)) && allowed > 1 {
			return f.result(Unknown, "the repeat may have reached the target after the declared %s retention, where a new execution is allowed: nothing to judge", p.Retention)
		}
		if b.Status != a.Status || !sameBody(a.Body, b.Body) {
			f.count(CatDiverged, 1)
			f.example("%s: %d %s", first, a.Status, clip(a.Body))
			f.example("%s: %d %s", repeat, b.Status, clip(b.Body))
			return f.result(Fail, "the replay differs from the first response")
		}
		return f.result(Pass, "one side effect; the replay has the same status %d and %d body bytes", b.Status, len(b.Body))
	}
}

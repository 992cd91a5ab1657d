package scenarios

import (
	"fmt"
	"strings"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/verdict"
)

// srcFailOpen is the rule the store scenarios hold a target to.
const srcFailOpen = "idemproof store outages (docs/scenarios.md, \"store outages\"): a key store that fails must fail the request closed"

// storeScenarios fault the target's own key store (profile store:) through the store
// fault point: a store outage must be a refusal the client may retry, never an
// execution without the key. Each runs alone on its target (a store fault hits every
// request it serves), and heals the store before its settle step.
func storeScenarios() []Scenario {
	needs := []profile.Capability{profile.CapStore}
	return []Scenario{
		{
			ID:          "store/down-on-retry",
			Description: "the key store is down when the retry of a committed request (its response lost) arrives",
			Requirement: "while the store is down the retry is refused with an answer the client may retry (5xx, 503, 409, 429), never executed again; after the store is back it gets the committed response: one side effect, or FAIL \"fail-open\"",
			Source:      and(srcFailOpen, srcSeed),
			Level:       verdict.LevelSafety,
			Labels:      []string{"group:store", "fault:store", "fault:after-upstream", "level:safety"},
			Needs:       needs,
			Faults:      []FaultOn{{Attempts: firstAttempt, Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterStatus, Status: 503}}},
			Steps:       []Step{{Name: "original"}, {Name: "retry", Store: StoreDown}, {Name: "after", Store: StoreBack}},
			Settle:      &Settle{},
			Check:       storeDownOnRetry,
		},
		{
			ID:          "store/down-on-first",
			Description: "the key store is down when a first attempt arrives; the retry comes after it is back",
			Requirement: "a first attempt during a store outage is refused before the work (an answer the client may retry); the retry after the outage executes it: one side effect, never one unrecorded execution and another on the retry",
			Source:      and(srcFailOpen, srcSeed),
			Level:       verdict.LevelSafety,
			Labels:      []string{"group:store", "fault:store", "level:safety"},
			Needs:       needs,
			Steps:       []Step{{Name: "original", Store: StoreDown}, {Name: "retry", Store: StoreBack}},
			Settle:      &Settle{},
			Check:       storeDownOnFirst,
		},
		{
			ID:          "store/hang-race",
			Description: "the key store stops answering (past the API's own store timeout) while two copies of a request race",
			Requirement: "two copies that meet a hung store make at most one execution between them; after the store is back the retry gets the one result: one side effect",
			Source:      and(srcFailOpen, srcSeed),
			Level:       verdict.LevelSafety,
			Labels:      []string{"group:store", "fault:store", "level:safety", "speed:slow"},
			Needs:       needs,
			Steps:       []Step{{Name: "race", Store: StoreHang, Copies: 2}, {Name: "after", Store: StoreBack}},
			Settle:      &Settle{},
			Check:       storeHangRace,
		},
		{
			ID:          "store/back-replays",
			Description: "a key taken before a store outage still replays after the store is back",
			Requirement: "after an outage (its connections cut, new ones refused, then back) the key taken before it replays the committed response: one side effect (a store that lost its keys is INFO, FAIL under expect.durable_keys)",
			Source:      and(srcFailOpen, srcDraftExpiry),
			Level:       verdict.LevelMust,
			Labels:      []string{"group:store", "fault:store", "level:must"},
			Needs:       needs,
			Steps:       []Step{{Name: "original"}, {Name: "during", Store: StoreDown}, {Name: "after", Store: StoreBack}},
			Settle:      &Settle{},
			Check:       storeBackReplays,
		},
	}
}

// outage is what the store fault point saw while a fault was in force: from its switch
// to the heal that ended it (or the last event).
type outage struct {
	fault string
	seen  verdict.StoreEvent // the counters' growth during it
}

// outages pairs each fault switch of the record with the heal after it.
func outages(r verdict.Record) []outage {
	var out []outage
	for i, ev := range r.Store {
		if ev.Fault == verdict.StoreUp {
			continue
		}
		end := ev
		for _, later := range r.Store[i+1:] {
			end = later
			if later.Fault == verdict.StoreUp {
				break
			}
		}
		seen := verdict.StoreEvent{Fault: ev.Fault, Step: ev.Step, At: ev.At, Stats: end.Stats.Sub(ev.Stats)}
		out = append(out, outage{fault: ev.Fault, seen: seen})
	}
	return out
}

// felt reports whether the outage reached the API's store connections: while the store
// was down, a connection of the API cut or a new one refused; while it hung or reset,
// a connection made or a byte sent into it. Without that, the API never reached for its
// store during the outage and the scenario proved nothing about one.
func (o outage) felt() bool {
	s := o.seen.Stats
	if o.fault == string(StoreDown) {
		return s.Refused > 0 || s.Cut > 0
	}
	return s.Connections > 0 || s.ToStore > 0
}

func (o outage) String() string {
	s := o.seen.Stats
	switch o.fault {
	case string(StoreDown):
		return fmt.Sprintf("store down: the point refused %d connection(s) and cut %d", s.Refused, s.Cut)
	default:
		return fmt.Sprintf("store %s: %d connection(s), %d byte(s) sent into it", o.fault, s.Connections, s.ToStore)
	}
}

// storeOutage returns the record's first outage and whether it was felt; a record
// without one is a runner bug, answered UNKNOWN by the caller.
func storeOutage(r verdict.Record) (outage, bool) {
	all := outages(r)
	if len(all) == 0 {
		return outage{}, false
	}
	return all[0], true
}

// notFelt is the UNKNOWN of a store scenario whose outage never reached the API.
func notFelt(o outage) (verdict.Verdict, string, verdict.Evidence) {
	return verdict.Unknown, fmt.Sprintf("the outage never reached the API's store (%s): it held no store connection and opened none while the store was out, so this says nothing about an outage (is the API's store address store.listen?)", o), verdict.Evidence{}
}

// refusedRetryably reports whether an answer during an outage is one a correct client
// retries: a 5xx, an in-flight refusal, a throttle, or no answer at all.
func refusedRetryably(op verdict.Op) bool {
	switch {
	case unseen(op):
		return true
	case op.Class == outcome.ServerError, op.Class == outcome.InFlight, op.Status == 429, op.Status == 503:
		return true
	}
	return false
}

// duringOutage judges the answers of the step sent while the store was out, before the
// ledger-based checks: a success that is not the committed response is an execution
// without the key (fail-open); a refusal a client does not retry is a FAIL too.
func duringOutage(r verdict.Record, p *profile.Profile, f *finding, step string) (verdict.Verdict, string, bool) {
	n := r.Ledger[verdict.LedgerOperation]
	committed, status, buffered := committedBody(r, p)
	for _, ans := range stepAnswers(r, step) {
		switch {
		case isSuccess(ans) && n > allowedEffects(r, p) && !(buffered && sameStatus(p, ans.Status, status) && sameBody(p, ans.Body, committed)):
			f.count(verdict.CatDuplicated, n-1)
			f.example("%s, while the store was out, got %s %s", step, describe(ans), clip(ans.Body))
			f.blame(ans, "a refusal the client may retry (503), no execution")
			v, msg, _ := f.result(verdict.Fail, "fail-open: %s executed while its key store was out (it got %s and the ledger shows %d side effects for one key)", stepPhrase(step), describe(ans), n)
			return v, msg, true
		case !isSuccess(ans) && !refusedRetryably(ans):
			f.example("%s, while the store was out, got %s", step, describe(ans))
			f.blame(ans, "a refusal the client may retry (5xx, 503, 409, 429)")
			v, msg, _ := f.result(verdict.Fail, "%s during the store outage got %s: a client stops on it, though the request was never wrong; a store outage must be a refusal the client may retry", stepPhrase(step), describe(ans))
			return v, msg, true
		}
	}
	return "", "", false
}

// storeDownOnRetry: the committed request's retry meets the store down.
func storeDownOnRetry(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
	return judgeOutage(r, p, "retry", "after", func(o outage, during []verdict.Op) string {
		return fmt.Sprintf("the retry was refused with %s while the store was down (%s); after it came back the retry got the committed response: one side effect", answersText(during), o)
	})
}

// storeDownOnFirst: the first attempt meets the store down; the retry comes after.
func storeDownOnFirst(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
	if r.LedgerErr != "" {
		return unknownLedger(r)
	}
	// More effects than retention windows the attempts reached: a duplicate. Within
	// them (an attempt a loaded machine sent past the declared retention), exactlyOnce
	// below says what may be late.
	if n := r.Ledger[verdict.LedgerOperation]; n > allowedEffects(r, p) {
		var f finding
		f.count(verdict.CatDuplicated, n-1)
		if first, ok := stepAnswer(r, "original"); ok && isSuccess(first) {
			f.example("original, while the store was down, got %s %s", describe(first), clip(first.Body))
			f.blame(first, "a refusal before the work (503)")
			return f.result(verdict.Fail, "fail-open: the original executed while its key store was down without recording its key (it got %s), and the retry after the store came back executed again: %d side effects for one key", describe(first), n)
		}
		if first, ok := stepAnswer(r, "original"); ok {
			f.blame(first, "a refusal before the work, nothing executed")
			return f.result(verdict.Fail, "the original was answered %s while its key store was down, yet %d side effects exist for one key: it executed without recording its key, and the retry executed again", describe(first), n)
		}
	}
	return judgeOutage(r, p, "original", "retry", func(o outage, during []verdict.Op) string {
		if len(during) > 0 && isSuccess(during[0]) {
			return fmt.Sprintf("the original executed while the store was down (%s) and the retry after it replayed it: its key was recorded all the same; one side effect", o)
		}
		return fmt.Sprintf("the original was refused with %s while the store was down (%s); the retry after it executed it: one side effect", answersText(during), o)
	})
}

// storeHangRace: two copies race while the store hangs.
func storeHangRace(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
	if r.LedgerErr != "" {
		return unknownLedger(r)
	}
	if n := r.Ledger[verdict.LedgerOperation]; n > allowedEffects(r, p) {
		var f finding
		f.count(verdict.CatDuplicated, n-1)
		race := stepAnswers(r, "race")
		for _, ans := range race {
			if isSuccess(ans) {
				f.blame(ans, "at most one execution between the copies")
			}
		}
		return f.result(verdict.Fail, "fail-open: two copies met a hung key store (the API's store calls timed out) and %d side effects exist for one key; the copies got %s", n, answersText(race))
	}
	return judgeOutage(r, p, "race", "after", func(o outage, during []verdict.Op) string {
		return fmt.Sprintf("two copies met a hung store (%s) and got %s; after it came back the retry got the one result: one side effect", o, answersText(during))
	})
}

// storeBackReplays: the key taken before the outage still replays after it.
func storeBackReplays(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
	if r.LedgerErr != "" {
		return unknownLedger(r)
	}
	var f finding
	if v, msg, decided := duringOutage(r, p, &f, "during"); decided {
		return v, msg, f.ev
	}
	if n := r.Ledger[verdict.LedgerOperation]; n > allowedEffects(r, p) {
		o, _ := storeOutage(r)
		after, _ := stepAnswer(r, "after")
		if !p.Expect.DurableKeys {
			return verdict.Info, fmt.Sprintf("the store lost the key taken before the outage (%s): the repeat after it executed again (%s, %d side effects for one key) — a key store that does not keep its keys (declare expect.durable_keys to make this a FAIL)", o, describe(after), n), verdict.Evidence{}
		}
		f.count(verdict.CatDuplicated, n-1)
		f.blame(after, "the committed response, no second execution")
		return f.result(verdict.Fail, "the key taken before the outage was lost (%s): the repeat after it executed again (%s, %d side effects for one key), though expect.durable_keys declares keys outlive an outage", o, describe(after), n)
	}
	return judgeOutage(r, p, "during", "after", func(o outage, during []verdict.Op) string {
		return fmt.Sprintf("the key taken before the outage (%s; a repeat during it got %s) replayed the committed response after it: one side effect", o, answersText(during))
	})
}

// judgeOutage is the common part: the outage must have reached the API, the answers
// during it must be retryable refusals (or the committed response), and the attempt after
// it (with the settle step) must show exactly one side effect and the committed response.
func judgeOutage(r verdict.Record, p *profile.Profile, during, after string, pass func(outage, []verdict.Op) string) (verdict.Verdict, string, verdict.Evidence) {
	if r.LedgerErr != "" {
		return unknownLedger(r)
	}
	var f finding
	if v, msg, decided := duringOutage(r, p, &f, during); decided {
		return v, msg, f.ev
	}
	o, ok := storeOutage(r)
	if !ok {
		return verdict.Unknown, "no store outage was switched (a runner error)", verdict.Evidence{}
	}
	v, msg, ev := exactlyOnce(after)(r, p)
	if v != verdict.Pass {
		return v, msg, ev
	}
	if !o.felt() {
		return notFelt(o)
	}
	return verdict.Pass, pass(o, stepAnswers(r, during)), ev
}

// answersText lists answers briefly: "503, 503".
func answersText(ops []verdict.Op) string {
	if len(ops) == 0 {
		return "nothing"
	}
	parts := make([]string, len(ops))
	for i, op := range ops {
		parts[i] = describe(op)
	}
	return strings.Join(parts, ", ")
}

// stepPhrase names a store scenario's step for people.
func stepPhrase(step string) string {
	switch step {
	case "during":
		return "the repeat"
	case "race":
		return "a copy"
	}
	return "the " + step
}

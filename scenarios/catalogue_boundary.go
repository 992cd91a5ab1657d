package scenarios

import (
	"strings"

	"github.com/idemproof/idemproof/downstream"
	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/verdict"
)

// The boundary: "the key deduplicates your API, not the internet". A target that writes
// its database and then calls a vendor (an email, a payment, a webhook) can call the
// vendor twice — or never — unless it passes a key derived from its own downstream, or
// records the call in the transaction that commits the work (a transactionally staged
// job). These scenarios watch the target's calls through the profile's downstream sink;
// each ends with a SETTLE step (calls made after the client's answer count too).
const srcBoundary = "idemproof seed rule \"the key deduplicates your API, not the internet\"; brandur, transactionally staged jobs"

// CatUnkeyed counts downstream calls that carried no key; CatKeyChanged calls of one
// operation under more than one downstream key; CatCalledOnRefusal calls a refusal made.
const (
	CatUnkeyed         = "unkeyed"
	CatKeyChanged      = "key-changed"
	CatCalledOnRefusal = "called-on-refusal"
)

func boundaryScenarios() []Scenario {
	labels := func(fault, level string) []string {
		return []string{"group:boundary", "fault:" + fault, "level:" + level, "needs:downstream"}
	}
	inFlightFaults, _ := inFlight(PayloadOriginal)
	return []Scenario{
		{
			ID:          "boundary/replay-no-second-call",
			Description: "a replay after a lost response makes no new vendor call",
			Requirement: "the vendor is called once per committed operation: a replay calls nobody",
			Source:      srcBoundary,
			Level:       verdict.LevelSafety,
			Labels:      labels("after-upstream", "safety"),
			Needs:       []profile.Capability{profile.CapDownstream},
			Faults:      []FaultOn{{Attempts: firstAttempt, Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterStatus, Status: 503}}},
			Steps:       originalThenRetry(),
			Check:       vendorOnce(vendorCheck{oneCall: true}),
		},
		{
			ID:          "boundary/retry-same-downstream-key",
			Description: "a re-driven vendor call (its answer was lost) carries the same derived key",
			Requirement: "every call for one operation carries one downstream key, so the vendor does it once",
			Source:      and(srcBoundary, srcStripe),
			Level:       verdict.LevelSafety,
			Labels:      labels("vendor-after-commit", "safety"),
			Needs:       []profile.Capability{profile.CapDownstream},
			Steps:       []Step{{Name: "original"}},
			Vendor:      []VendorFault{{Nth: 1, Fault: downstream.Fault503After}},
			Check:       vendorOnce(vendorCheck{sameKey: true, wantRedrive: true}),
		},
		{
			ID:          "boundary/vendor-5xx-then-retry",
			Description: "the vendor fails once (503, nothing done); the retry ends with exactly one vendor effect",
			Requirement: "a vendor failure is retried (by the API or its worker) until the vendor did it once",
			Source:      srcBoundary,
			Level:       verdict.LevelSafety,
			Labels:      labels("vendor-before-commit", "safety"),
			Needs:       []profile.Capability{profile.CapDownstream},
			Steps:       []Step{{Name: "original"}},
			Vendor:      []VendorFault{{Nth: 1, Fault: downstream.Fault503Before}},
			Check:       vendorOnce(vendorCheck{sameKey: true}),
		},
		{
			ID:          "boundary/crash-between-commit-and-call",
			Description: "the API crashes after its commit, before it called the vendor; the recovery calls it exactly once",
			Requirement: "a committed operation's vendor call survives a crash (a retry or a background completer makes it), once, under a stable key",
			Source:      and(srcBoundary, srcBrandur),
			Level:       verdict.LevelSafety,
			Labels:      labels("crash", "safety"),
			Needs:       []profile.Capability{profile.CapDownstream, profile.CapCrashAfterCommit},
			Steps:       []Step{{Name: "original", Hook: HookCrashAfterCommit}, {Name: "retry"}},
			Check:       crashed("original", "crash.after_commit", vendorOnce(vendorCheck{sameKey: true})),
		},
		{
			ID:          "boundary/no-call-on-refusal",
			Description: "answers that refuse the request (409 in flight, 422 mismatch) never call the vendor",
			Requirement: "a refused request does no work, here or downstream: the vendor hears of the operation once",
			Source:      and(srcBoundary, srcDraftErrors),
			Level:       verdict.LevelSafety,
			Labels:      labels("before-upstream", "safety"),
			Needs:       []profile.Capability{profile.CapDownstream, profile.CapSlow, profile.CapAlteredBody},
			Faults:      inFlightFaults,
			Steps: []Step{
				{Name: "original", Hook: HookSlow, Background: true},
				{Name: "repeat"},
				{Name: "mismatch", Payload: PayloadAltered, Wait: WaitBackground},
			},
			Check: vendorOnce(vendorCheck{oneCall: true, refusals: []string{"repeat", "mismatch"}}),
		},
	}
}

// vendorCheck configures vendorOnce.
type vendorCheck struct {
	// oneCall: no vendor fault was injected, so one call is all a correct target makes.
	oneCall bool
	// sameKey: every call carries one non-empty downstream key.
	sameKey bool
	// wantRedrive: the first call's answer was lost; the check needs a second call to
	// judge the key (without one it is INFO: the target never re-drove).
	wantRedrive bool
	// refusals are steps that must have been refused (in flight or mismatch) for the
	// run to say anything about refusals.
	refusals []string
}

// vendorOnce judges the downstream ledger against the API's: the operation committed
// once (its own ledger), so the vendor must have done it exactly once, after the SETTLE
// step. Lost answers of the client (info) never fail by themselves: the vendor's ledger
// and the API's are what is judged.
func vendorOnce(c vendorCheck) Checker {
	return func(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
		if r.LedgerErr != "" {
			return unknownLedger(r)
		}
		var f finding
		if r.DownstreamErr != "" {
			return f.result(verdict.Unknown, "the vendor's calls could not be read: %s", r.DownstreamErr)
		}
		n := r.Ledger[verdict.LedgerOperation]
		if n != 1 {
			return f.result(verdict.Unknown, "the API's own ledger shows %d side effect(s), not 1: the vendor's count cannot be judged against it (the replay and recovery scenarios judge the API)", n)
		}
		if len(c.refusals) > 0 {
			refused := 0
			for _, st := range c.refusals {
				if a, ok := stepAnswer(r, st); ok && (a.Class == outcome.InFlight || a.Class == outcome.Mismatch) {
					refused++
				}
			}
			if refused == 0 {
				return f.result(verdict.Unknown, "no step was refused (%s): nothing to judge about refusals", strings.Join(c.refusals, ", "))
			}
		}
		l := downstream.LedgerOf(r.Downstream)
		settle := p.Downstream.SettleTime()
		switch {
		case l.Effects == 0:
			f.count(verdict.CatLost, 1)
			f.example("the API committed 1 side effect; %d call(s) reached the vendor, none took effect, within %s after the last answer", l.Calls, settle)
			return f.result(verdict.Fail, "the committed operation never took effect at the vendor (%d call(s) within the %s settle window; a target that delivers later, e.g. an outbox polling less often, declares that as downstream.settle)", l.Calls, settle)
		case l.Effects > 1:
			f.count(verdict.CatDuplicated, l.Effects-1)
			if l.Unkeyed > 0 {
				f.count(CatUnkeyed, l.Unkeyed)
			}
			f.example("%d vendor calls: %s", l.Calls, callsText(r.Downstream))
			return f.result(verdict.Fail, "the vendor did one operation %d times (%d call(s), %d without a key)", l.Effects, l.Calls, l.Unkeyed)
		}
		if c.sameKey && len(r.Downstream) > 1 {
			if l.Unkeyed > 0 {
				f.count(CatUnkeyed, l.Unkeyed)
				f.example("%s", callsText(r.Downstream))
				return f.result(verdict.Fail, "%d of %d vendor calls for one operation carried no key: a re-drive is a new operation for the vendor", l.Unkeyed, l.Calls)
			}
			if l.Keys() > 1 {
				f.count(CatKeyChanged, l.Keys()-1)
				f.example("%s", callsText(r.Downstream))
				return f.result(verdict.Fail, "the vendor calls of one operation carried %d different keys", l.Keys())
			}
		}
		resent := resentAfterLostAnswer(r.Downstream)
		if c.oneCall && l.Calls-1 > resent {
			cat := verdict.CatDuplicated
			if len(c.refusals) > 0 {
				cat = CatCalledOnRefusal
			}
			f.count(cat, l.Calls-1-resent)
			f.example("%s", callsText(r.Downstream))
			if resent > 0 {
				return f.result(verdict.Fail, "%d vendor calls for one committed operation and no vendor failure, %d of them re-sent because the target hung up before the vendor's answer: a replay or a refusal called the vendor again (the vendor deduplicated it by key)", l.Calls, resent)
			}
			return f.result(verdict.Fail, "%d vendor calls for one committed operation and no vendor failure: a replay or a refusal called the vendor again (the vendor deduplicated it by key)", l.Calls)
		}
		if c.wantRedrive && l.Calls < 2 {
			return f.result(verdict.Info, "the vendor's answer was lost and the target never re-drove the call: one effect, the key's stability not exercised")
		}
		key := "no key"
		for k := range l.PerKey {
			if k != "" {
				key = "key " + k
			}
		}
		if c.oneCall && resent > 0 {
			return f.result(verdict.Pass, "the vendor did it once: %d call(s) under %s; %d re-sent after the target hung up before the vendor's answer (its own timeout: at-least-once delivery, not a second operation)", l.Calls, key, resent)
		}
		return f.result(verdict.Pass, "the vendor did it once: %d call(s) under %s", l.Calls, key)
	}
}

// resentAfterLostAnswer is how many calls a correct at-least-once sender could have
// made again because it never had an answer: one for each call, but the last, whose
// caller hung up before the vendor answered (the sink was slow, the target's own timeout
// fired). Without it a loaded machine, which slows the sink, would turn a correct
// outbox's re-send into "the replay called the vendor again".
func resentAfterLostAnswer(calls []downstream.Call) int {
	n := 0
	for _, c := range calls[:max(len(calls)-1, 0)] {
		if c.CallerLeft {
			n++
		}
	}
	return n
}

// callsText is each call as "#seq key=K answer".
func callsText(calls []downstream.Call) string {
	parts := make([]string, 0, len(calls))
	for _, c := range calls {
		key := "none"
		if c.HasKey {
			key = c.Key
		}
		answer := string(c.Answer)
		if c.CallerLeft {
			answer += " (caller gone before the answer)"
		}
		parts = append(parts, "#"+itoa(int(c.Seq))+" key="+key+" "+answer)
	}
	return strings.Join(parts, ", ")
}

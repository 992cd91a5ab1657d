package scenarios

import (
	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/verdict"
)

// A checker that reasons from a test hook checks, in the journal, that the hook acted on
// the request that carried it: a declaration is evidence only once the run has seen it
// act. The slow hook's checks live beside the race checkers (hold.go); the fail hook's
// in storage/5xx-not-pinned (a failure with the declared status); the crash hook's here.

// crashed wraps the checker of a scenario whose first step carries a crash hook: its PASS
// stands only when the hooked request was abandoned, the client given no complete
// answer of the target's. A hooked request the target answered normally (the journal
// shows the upstream's answer delivered) crashed nothing, and whatever the retry got
// proves nothing about recovery from a crash: UNKNOWN, naming the hook. A FAIL stands
// either way (two effects for one key, a stuck key are violations however they came).
func crashed(step, hook string, judge Checker) Checker {
	return func(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
		v, msg, ev := judge(r, p)
		if v != verdict.Pass {
			return v, msg, ev
		}
		if answered, how := answeredNormally(r, step); answered {
			return verdict.Unknown, hook + " did not act: the hooked " + step + " was " + how + ", so nothing crashed and recovery from a crash was not exercised (does the target implement the hook, on this request?); it saw: " + msg, ev
		}
		return v, msg, ev
	}
}

// answeredNormally reports whether the step's request got a complete answer of the
// target's, and how, in words: from its journal record (the first that reached the
// target, the step being the scenario's first) when the proxy saw it, else from the
// client's answer. A 502, 503 or 504 is a gateway's in front of a target that dropped
// the request: no answer of the target's.
func answeredNormally(r verdict.Record, step string) (bool, string) {
	if j, ok := originalRecord(r); ok {
		if deliveredByTarget(j) {
			return true, "answered " + itoa(j.UpstreamStatus) + " by the target and delivered (the proxy's journal)"
		}
		return false, ""
	}
	a, ok := stepAnswer(r, step)
	if ok && isSuccess(a) {
		return true, "answered " + describe(a)
	}
	return false, ""
}

// deliveredByTarget reports whether a journal record's request got the target's own
// complete answer: an upstream status delivered whole, and not a gateway's 502, 503 or
// 504 (a gateway in front answers those for a target that dropped the connection).
func deliveredByTarget(j faultproxy.Record) bool {
	return j.UpstreamStatus != 0 && !gatewayStatus(j.UpstreamStatus) && j.ClientResult == faultproxy.ClientDelivered
}

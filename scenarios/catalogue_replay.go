package scenarios

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/verdict"
)

// firstAttempt and firstTwoAttempts select attempt ordinals of the scenario's key.
var (
	firstAttempt     = &faultproxy.Range{From: 1, To: 1}
	firstTwoAttempts = &faultproxy.Range{From: 1, To: 2}
)

func originalThenRetry() []Step { return []Step{{Name: "original"}, {Name: "retry"}} }

// afterUpstream is a replay scenario: the first attempt commits, its response is lost to
// fault, the retry must get the committed result with one side effect.
func afterUpstream(id, what string, fault faultproxy.FaultSpec, dur DurationRef) Scenario {
	return Scenario{
		ID:          id,
		Description: "the response to a committed request is lost (" + what + "); the retry gets the committed result",
		Requirement: "after " + what + ", the retry gets the committed response: one side effect, same status and body",
		Source:      and(srcDraftEnforced, srcSeed),
		Level:       verdict.LevelSafety,
		Labels:      []string{"group:replay", "fault:after-upstream", "level:safety"},
		Faults:      []FaultOn{{Attempts: firstAttempt, Fault: fault, DurationOf: dur}},
		Steps:       originalThenRetry(),
		Check:       exactlyOnce("retry"),
	}
}

func replayScenarios() []Scenario {
	return []Scenario{
		{
			ID:          "replay/sequential",
			Description: "a plain repeat after a success replays the stored response",
			Requirement: "a repeat with the same key and payload: one side effect, same status and body",
			Source:      and(srcDraftEnforced, srcStripe),
			Level:       verdict.LevelSafety,
			Labels:      []string{"group:replay", "fault:none", "level:safety"},
			Steps:       []Step{{Name: "original"}, {Name: "repeat"}},
			Check:       identicalReplay("original", "repeat"),
		},
		afterUpstream("replay/after-503", "a 503 from the proxy", faultproxy.FaultSpec{Type: faultproxy.FaultAfterStatus, Status: 503}, ""),
		afterUpstream("replay/after-502", "a 502 from the proxy", faultproxy.FaultSpec{Type: faultproxy.FaultAfterStatus, Status: 502}, ""),
		afterUpstream("replay/after-504", "a 504 from the proxy", faultproxy.FaultSpec{Type: faultproxy.FaultAfterStatus, Status: 504}, ""),
		afterUpstream("replay/after-reset", "a TCP reset", faultproxy.FaultSpec{Type: faultproxy.FaultAfterReset}, ""),
		afterUpstream("replay/after-close", "a close with no bytes", faultproxy.FaultSpec{Type: faultproxy.FaultAfterClose}, ""),
		afterUpstream("replay/after-truncate", "a body truncated after 8 bytes", faultproxy.FaultSpec{Type: faultproxy.FaultAfterTruncate, Bytes: 8}, ""),
		withLabel(afterUpstream("replay/after-hold", "a response held past the client's timeout", faultproxy.FaultSpec{Type: faultproxy.FaultAfterHold, Then: "drop"}, PastClientTimeout), "speed:slow"),
		{
			ID:          "replay/new-session",
			Description: "the original's response is reset after the commit and the retry comes in a new MCP session, as from an agent that initialized again",
			Requirement: "a key outlives the session it came in: the retry in another session of the same principal gets the committed response, one side effect",
			Source:      and(srcDraftEnforced, srcSeed),
			Level:       verdict.LevelSafety,
			Labels:      []string{"group:replay", "fault:after-upstream", "level:safety"},
			Needs:       []profile.Capability{profile.CapMCPSessions},
			Faults:      []FaultOn{{Attempts: firstAttempt, Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterReset}}},
			Steps:       []Step{{Name: "original"}, {Name: "retry", NewSession: true}},
			Check:       inAnotherSession,
		},
		{
			ID:          "replay/lost-twice",
			Description: "the original's and the first replay's responses are both lost; the third attempt gets the committed result",
			Requirement: "replays keep working after a lost replay: one side effect, the committed response",
			Source:      and(srcDraftEnforced, srcSeed),
			Level:       verdict.LevelSafety,
			Labels:      []string{"group:replay", "fault:after-upstream", "level:safety"},
			Faults:      []FaultOn{{Attempts: firstTwoAttempts, Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterReset}}},
			Steps:       []Step{{Name: "original"}, {Name: "retry-1"}, {Name: "retry"}},
			Check:       exactlyOnce("retry"),
		},
		{
			ID:          "replay/fidelity-body",
			Description: "the replay's status and body bytes equal the committed response",
			Requirement: "a replay returns the stored response byte for byte, never a regenerated one",
			Source:      and(srcStripe, srcSeed),
			Level:       verdict.LevelSafety,
			Labels:      []string{"group:replay", "fault:after-upstream", "level:safety"},
			Faults:      []FaultOn{{Attempts: firstAttempt, Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterStatus, Status: 503}}},
			Steps:       []Step{{Name: "original"}, {Name: "retry"}, {Name: "repeat"}},
			Check:       fidelityBody,
		},
		{
			ID:          "replay/fidelity-headers",
			Description: "the replay carries the allow-listed headers (expect.replay_headers) of the first response",
			Requirement: "allow-listed response headers are stored and replayed unchanged",
			Source:      srcStripe,
			Level:       verdict.LevelMust,
			Labels:      []string{"group:replay", "fault:none", "level:must"},
			Needs:       []profile.Capability{profile.CapReplayHeaders},
			Steps:       []Step{{Name: "original"}, {Name: "repeat"}},
			Check:       fidelityHeaders,
		},
		{
			ID:          "replay/marker",
			Description: "a replay carries the declared replay header; the first response does not",
			Requirement: "replays are marked (Stripe: Idempotent-Replayed: true) so clients can tell",
			Source:      srcStripe,
			Level:       verdict.LevelShould,
			Labels:      []string{"group:replay", "fault:none", "level:should"},
			Needs:       []profile.Capability{profile.CapReplayHeader},
			Steps:       []Step{{Name: "original"}, {Name: "repeat"}},
			Check:       replayMarker,
		},
		afterRestart(),
		beforeUpstream("before/503", "a 503 from the proxy", faultproxy.FaultSpec{Type: faultproxy.FaultBeforeStatus, Status: 503}, ""),
		beforeUpstream("before/reset", "a reset by the proxy", faultproxy.FaultSpec{Type: faultproxy.FaultBeforeReset}, ""),
		delayedThenRetried(beforeUpstream("before/delay", "a delay by the proxy", faultproxy.FaultSpec{Type: faultproxy.FaultBeforeDelay}, QuarterClientTimeout)),
	}
}

// delayedThenRetried words before/delay as it happens: the delay (a quarter of
// client_timeout) holds the request back, it still arrives and executes, and the retry
// after it is answered by the one execution (a replay, or its own if it came first).
func delayedThenRetried(s Scenario) Scenario {
	s.Description = "the request reaches the target late (a delay by the proxy); it and its retry make exactly one side effect"
	s.Requirement = "a request that arrives late (a delay by the proxy) and its retry make one side effect, nothing fabricated"
	return s
}

// beforeUpstream is the contrast: the request never arrived, the retry must execute it,
// exactly once.
func beforeUpstream(id, what string, fault faultproxy.FaultSpec, dur DurationRef) Scenario {
	return Scenario{
		ID:          id,
		Description: "the request is stopped before the target (" + what + "); the retry executes it exactly once",
		Requirement: "after " + what + " (never arrived), the retry executes it: one side effect, nothing fabricated",
		Source:      and(srcDraftEnforced, srcSeed),
		Level:       verdict.LevelSafety,
		Labels:      []string{"group:before", "fault:before-upstream", "level:safety"},
		Faults:      []FaultOn{{Attempts: firstAttempt, Fault: fault, DurationOf: dur}},
		Steps:       originalThenRetry(),
		Check:       exactlyOnce("retry"),
	}
}

func withLabel(s Scenario, l string) Scenario {
	s.Labels = append(s.Labels, l)
	return s
}

// fidelityBody: the committed response (buffered by the proxy when the 503 hid it), the
// retry and a further repeat are the same bytes.
func fidelityBody(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
	v, msg, ev := exactlyOnce("retry")(r, p)
	if v != verdict.Pass {
		return v, msg, ev
	}
	f := finding{ev: ev}
	retry, _ := stepAnswer(r, "retry")
	repeat, ok := stepAnswer(r, "repeat")
	if ok && unseen(repeat) {
		return f.result(verdict.Unknown, "the second replay was not seen (%s): the replays cannot be compared", describe(repeat))
	}
	if ok && !sameResponse(p, retry, repeat) && allowedEffects(r, p) > 1 {
		return f.result(verdict.Unknown, "%s: nothing to judge", mayBeLate("the second replay", p))
	}
	if !ok || !sameResponse(p, retry, repeat) {
		f.count(verdict.CatDiverged, 1)
		f.example("retry:  %d %s", retry.Status, clip(retry.Body))
		f.example("repeat: %d %s", repeat.Status, clip(repeat.Body))
		if ok {
			f.blameAgainst(repeat, "the retry's "+itoa(retry.Status)+" replayed, byte for byte", &retry)
		}
		return f.result(verdict.Fail, "two replays of one key differ")
	}
	committed, _, buffered := committedBody(r, p)
	// The checks above compare JSON by value (Profile.sameBody); this scenario is the one
	// that asks whether the bytes were kept.
	if why := bytesChanged(p, committed, buffered, retry, repeat); why != "" {
		f.example("retry:  %s", clip(retry.Body))
		f.example("repeat: %s", clip(repeat.Body))
		switch {
		case len(p.Expect.VolatileFields) > 0 && volatileDiffer(p, retry.Body, repeat.Body):
			return f.result(verdict.Pass, "the replays are the committed response (%d) but for the declared volatile fields (%s); %s", retry.Status, strings.Join(p.Expect.VolatileFields, ", "), why)
		case p.Expect.ReplayBody == "json":
			return f.result(verdict.Pass, "the replays are the committed JSON value (%d), re-serialized as declared (replay_body: json): %s", retry.Status, why)
		}
		return f.result(verdict.NonStrict, "the replays are the committed JSON value (%d) but not its bytes: %s; a replay SHOULD be the stored response byte for byte (declare expect.replay_body: json if it is re-serialized on purpose)", retry.Status, why)
	}
	if !buffered {
		return f.result(verdict.Pass, "replays agree (%d, %d bytes); the committed body was not buffered by the proxy, so it was compared only between replays", retry.Status, len(retry.Body))
	}
	return f.result(verdict.Pass, "committed response and both replays are identical (%d, %d bytes)", retry.Status, len(retry.Body))
}

// bytesChanged says how the replays' bytes differ from each other or from the committed
// body when their JSON values agree: "" when the bytes agree too.
func bytesChanged(p *profile.Profile, committed []byte, buffered bool, retry, repeat verdict.Op) string {
	switch {
	case buffered && !bytes.Equal(committed, retry.Body):
		return fmt.Sprintf("the committed body had %d bytes, the retry's replay %d in another order or spelling", len(committed), len(retry.Body))
	case !bytes.Equal(retry.Body, repeat.Body):
		return fmt.Sprintf("the two replays differ in their bytes (%d and %d)", len(retry.Body), len(repeat.Body))
	}
	return ""
}

// replayPremise reads the ledger before a check of what a replay carries (its headers,
// its marker): where the repeat executed again, nothing was replayed, and comparing the
// two answers proves nothing about replays. More effects than allowed is the duplicate
// it is (FAIL); more than one where a late repeat may have executed anew leaves nothing
// replayed to judge (UNKNOWN); a success with no effect at all is lost (FAIL). decided
// is false when the ledger shows the one execution a replay needs.
func replayPremise(r verdict.Record, p *profile.Profile, first, repeat string) (v verdict.Verdict, msg string, ev verdict.Evidence, decided bool) {
	if r.LedgerErr != "" {
		v, msg, ev = unknownLedger(r)
		return v, msg, ev, true
	}
	var f finding
	a, _ := stepAnswer(r, first)
	b, okB := stepAnswer(r, repeat)
	n, allowed := r.Ledger[verdict.LedgerOperation], allowedEffects(r, p)
	switch {
	case n > allowed:
		f.count(verdict.CatDuplicated, n-allowed)
		if okB {
			f.blame(b, "the replay, no second execution")
		}
		v, msg, ev = f.result(verdict.Fail, "%s%d side effects for one key, want %d: the repeat executed again, so nothing was replayed", keyIgnored(r, n), n, allowed)
	case n > 1:
		v, msg, ev = f.result(verdict.Unknown, "%d side effects: %s, so nothing shows a replay to judge", n, mayBeLate("the repeat", p))
	case n == 0 && isSuccess(a):
		f.count(verdict.CatLost, 1)
		f.blame(a, "a success with its side effect")
		v, msg, ev = f.result(verdict.Fail, "%s got %d but the ledger shows no side effect", first, a.Status)
	default:
		return "", "", verdict.Evidence{}, false
	}
	return v, msg, ev, true
}

func fidelityHeaders(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
	if v, msg, ev, decided := replayPremise(r, p, "original", "repeat"); decided {
		return v, msg, ev
	}
	var f finding
	a, okA := stepAnswer(r, "original")
	b, okB := stepAnswer(r, "repeat")
	if !okA || !okB || !isSuccess(a) || !isSuccess(b) {
		return f.result(verdict.Unknown, "original %s, repeat %s: no successful pair to compare", describe(a), describe(b))
	}
	var diff []string
	for _, h := range p.Expect.ReplayHeaders {
		if a.Headers[h] != b.Headers[h] {
			diff = append(diff, h)
			f.example("%s: first %q, replay %q", h, a.Headers[h], b.Headers[h])
		}
	}
	if len(diff) > 0 && allowedEffects(r, p) > 1 {
		return f.result(verdict.Unknown, "replayed headers differ (%s), but %s: nothing to judge", strings.Join(diff, ", "), mayBeLate("the repeat", p))
	}
	if len(diff) > 0 {
		f.count(verdict.CatDiverged, 1)
		return f.result(verdict.Fail, "replayed headers differ: %s", strings.Join(diff, ", "))
	}
	return f.result(verdict.Pass, "allow-listed headers equal: %s", strings.Join(p.Expect.ReplayHeaders, ", "))
}

func replayMarker(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
	if v, msg, ev, decided := replayPremise(r, p, "original", "repeat"); decided {
		return v, msg, ev
	}
	var f finding
	a, okA := stepAnswer(r, "original")
	b, okB := stepAnswer(r, "repeat")
	if !okA || !okB || !isSuccess(a) || !isSuccess(b) {
		return f.result(verdict.Unknown, "original %s, repeat %s: no successful pair to compare", describe(a), describe(b))
	}
	h := p.Expect.ReplayHeader
	switch {
	case !replayMarked(b, p) && allowedEffects(r, p) > 1:
		return f.result(verdict.Unknown, "the repeat does not carry %s, but %s: nothing to judge", h, mayBeLate("it", p))
	case replayMarked(a, p):
		return f.result(verdict.NonStrict, "the first response already says it is a replay: %s: %q", h, a.Headers[h])
	case !replayMarked(b, p):
		return f.result(verdict.NonStrict, "the replay does not carry %s", h)
	}
	if v, ok := a.Headers[h]; ok {
		return f.result(verdict.Pass, "the replay carries %s: %q; the first response says %q", h, b.Headers[h], v)
	}
	return f.result(verdict.Pass, "the replay carries %s: %q; the first response does not", h, b.Headers[h])
}

// inAnotherSession is exactlyOnce("retry"), but a PASS needs the journal to show the
// key's attempts in two sessions (two Mcp-Session-Id values). A server that issues no
// session id at all (a stateless one) has no session to scope a key by, and every retry
// is already one without: INFO, its retry judged all the same. One session id means the
// retry did not come in a new one: UNKNOWN.
func inAnotherSession(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
	v, msg, ev := exactlyOnce("retry")(r, p)
	if v != verdict.Pass {
		return v, msg, ev
	}
	sessions := map[string]bool{}
	for _, j := range r.Journal {
		for name, value := range j.Headers {
			if strings.EqualFold(name, "Mcp-Session-Id") && value != "" {
				sessions[value] = true
			}
		}
	}
	if len(sessions) == 0 {
		return verdict.Info, "the server issues no session (no Mcp-Session-Id, a stateless server): no session to scope the key by, and the retry came without one as every attempt does; " + msg, ev
	}
	if len(sessions) < 2 {
		return verdict.Unknown, fmt.Sprintf("the key's attempts came in %d distinct session(s) (Mcp-Session-Id), not two, so the retry in a new session was not exercised; it saw: %s", len(sessions), msg), ev
	}
	return verdict.Pass, "the retry came in a new session: " + msg, ev
}

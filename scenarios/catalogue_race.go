package scenarios

import (
	"fmt"
	"net/http"
	"sort"
	"time"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/verdict"
)

// inFlight is the shared setup of the in-flight scenarios: the original runs slowly in
// the background; the repeat is delayed by the proxy (a quarter of the slow hook) so it
// arrives while the original is executing.
func inFlight(repeat Payload) ([]FaultOn, []Step) {
	return inFlightOf(repeat, HookSlow)
}

// inFlightOf is inFlight with the original's hook: HookSlowFail for an original that is
// held and then fails.
func inFlightOf(repeat Payload, original Hook) ([]FaultOn, []Step) {
	return []FaultOn{{Step: "repeat", Fault: faultproxy.FaultSpec{Type: faultproxy.FaultBeforeDelay}, DurationOf: QuarterSlow}},
		[]Step{
			{Name: "original", Hook: original, Background: true},
			{Name: "repeat", Payload: repeat},
			{Name: "after", Wait: WaitBackground},
		}
}

func burst(id string, n int, level verdict.Level) Scenario {
	s := Scenario{
		ID:          id,
		Description: "attempts with one key sent at once (" + itoa(n) + "): one executes",
		Requirement: "concurrent attempts with one key: one side effect; the others get the in-flight status or the identical replay",
		Source:      and(srcDraftErrors, srcSeed),
		Level:       level,
		Labels:      []string{"group:race", "fault:none", "level:safety"},
		Steps:       []Step{{Name: "burst", Copies: n}},
		Settle:      &Settle{},
		Check:       noneRefusedIsInfo(oneWinner("burst")),
	}
	if n >= 1000 {
		s.Labels = append(s.Labels, "speed:slow")
	}
	return s
}

func raceScenarios() []Scenario {
	fo, steps := inFlight(PayloadOriginal)
	foOther, stepsOther := inFlight(PayloadAltered)
	// No step after the original: a request sent once it failed would execute, and its
	// side effect would stand in for the one a repeat's success claims. The scenario's
	// end waits for the original.
	foFails, stepsFails := inFlightOf(PayloadOriginal, HookSlowFail)
	stepsFails = stepsFails[:2]
	return []Scenario{
		{
			ID:          "race/concurrent-pair",
			Description: "two attempts at once while the work is held: one executes",
			Requirement: "a key is recorded before the work: one side effect; the other attempt gets the in-flight status or the identical replay",
			Source:      and(srcBrandur, srcSeed),
			Level:       verdict.LevelSafety,
			Labels:      []string{"group:race", "fault:none", "level:safety"},
			Needs:       []profile.Capability{profile.CapSlow},
			Steps:       []Step{{Name: "burst", Copies: 2, Hook: HookSlow}},
			Settle:      &Settle{},
			Check:       oneWinnerHeld("burst", 2),
		},
		burst("race/burst-50", 50, verdict.LevelSafety),
		burst("race/burst-1000", 1000, verdict.LevelSafety),
		{
			ID:          "race/duplicate-sequential",
			Description: "the proxy delivers the request twice in sequence, as a load balancer retry does",
			Requirement: "a duplicated delivery executes once",
			Source:      srcSeed,
			Level:       verdict.LevelSafety,
			Labels:      []string{"group:race", "fault:duplicate", "level:safety"},
			Faults:      []FaultOn{{Attempts: firstAttempt, Fault: faultproxy.FaultSpec{Type: faultproxy.FaultDuplicate, Mode: "sequential"}}},
			Steps:       []Step{{Name: "original"}, {Name: "retry"}},
			Settle:      &Settle{},
			Check:       exactlyOnce("retry"),
		},
		{
			ID:          "race/duplicate-concurrent",
			Description: "the proxy delivers the request twice at the same moment",
			Requirement: "a duplicated concurrent delivery executes once",
			Source:      srcSeed,
			Level:       verdict.LevelSafety,
			Labels:      []string{"group:race", "fault:duplicate", "level:safety"},
			Needs:       []profile.Capability{profile.CapSlow},
			Faults:      []FaultOn{{Attempts: firstAttempt, Fault: faultproxy.FaultSpec{Type: faultproxy.FaultDuplicate, Mode: "concurrent"}}},
			// The slow hook holds the work, so the two copies meet at the target: without
			// it a fast target answers the first copy before the second looks its key up,
			// and a check-then-set server passes as a correct one does.
			Steps:  []Step{{Name: "original", Hook: HookSlow}, {Name: "retry"}},
			Settle: &Settle{},
			Check:  duplicatesHeld(exactlyOnce("retry")),
		},
		{
			ID:          "race/in-flight-409",
			Description: "a repeat while the original executes gets the declared in-flight answer",
			Requirement: "a concurrent repeat is refused with expect.in_flight (409 by default), a retryable answer; under in_flight: wait it waits and gets the committed response",
			Source:      and(srcDraftErrors, srcStripe),
			Level:       verdict.LevelMust,
			Labels:      []string{"group:race", "fault:before-upstream", "level:must"},
			Needs:       []profile.Capability{profile.CapSlow},
			Faults:      fo,
			Steps:       steps,
			Settle:      &Settle{},
			Check:       inFlightStatus,
		},
		{
			ID:          "race/in-flight-not-fabricated",
			Description: "no success is delivered for a repeat while nothing has completed",
			Requirement: "a repeat during the original never gets a 2xx before the original finished",
			Source:      srcSeed,
			Level:       verdict.LevelSafety,
			Labels:      []string{"group:race", "fault:before-upstream", "level:safety"},
			Needs:       []profile.Capability{profile.CapSlow},
			Faults:      fo,
			Steps:       steps,
			Settle:      &Settle{},
			Check:       inFlightNotFabricated,
		},
		{
			ID:          "race/in-flight-original-fails",
			Description: "a repeat while the original runs, and then fails, is never told it succeeded",
			Requirement: "a repeat during an original that then fails (slow_operation and fail_operation on one request) gets no success unless it executed itself: a success with no side effect was promised before the outcome was known",
			Source:      srcSeed,
			Level:       verdict.LevelSafety,
			Labels:      []string{"group:race", "fault:before-upstream", "level:safety"},
			Needs:       []profile.Capability{profile.CapSlow, profile.CapFail, profile.CapSlowFail},
			Faults:      foFails,
			Steps:       stepsFails,
			Check:       inFlightOriginalFails,
		},
		{
			ID:          "race/in-flight-retry-after",
			Description: "the in-flight refusal says when to retry",
			Requirement: "the in-flight 409 carries a Retry-After that parses: delta-seconds or an HTTP-date (a refusal inside the answer: the retry hint its in_flight rule declares)",
			Source:      srcStripe + " (retry with backoff); RFC 9110 §10.2.3 (Retry-After)",
			Level:       verdict.LevelShould,
			Labels:      []string{"group:race", "fault:before-upstream", "level:should"},
			Needs:       []profile.Capability{profile.CapSlow, profile.CapInFlightRefusal, profile.CapRetryHint},
			Faults:      fo,
			Steps:       steps,
			Settle:      &Settle{},
			Check:       inFlightRetryAfter,
		},
		{
			ID:          "race/in-flight-other-payload",
			Description: "another payload with the same key while the original runs",
			Requirement: "another payload during the original is never executed and never answered 2xx",
			Source:      and(srcDraftFingerprint, srcSeed),
			Level:       verdict.LevelSafety,
			Labels:      []string{"group:race", "fault:before-upstream", "level:safety"},
			Needs:       []profile.Capability{profile.CapSlow, profile.CapAlteredBody},
			Faults:      foOther,
			Steps:       stepsOther,
			Settle:      &Settle{},
			Check:       inFlightOtherPayload,
		},
	}
}

// oneWinner: one side effect; every success is the identical response; every other
// answer is the in-flight refusal (under in_flight: wait there is none: every repeat
// waits and gets the replay). Attempts nobody saw the outcome of (Jepsen info) neither
// fail nor stop a pass; when no answer showed the result, the settle step does.
func oneWinner(step string) Checker {
	return func(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
		if r.LedgerErr != "" {
			return unknownLedger(r)
		}
		var f finding
		answers := stepAnswers(r, step)
		// Successes are judged by their distinct responses: with n side effects there are
		// at most n committed responses to replay (n > 1 only when the burst outlasted
		// the retention and a later attempt legitimately executed anew). wants holds
		// them, the first of each, and bodies their bodyKeys: a success is another
		// response unless one has its body and, by sameStatus, its status.
		var wants []verdict.Op
		var bodies []string
		ok, refused, lost, other, failed5xx := 0, 0, 0, 0, 0
		refusedStatus := 0
		var extra, others []verdict.Op // successes with another response than the first; wrong answers
		for _, a := range answers {
			switch {
			case isSuccess(a):
				ok++
				body, seen := bodyKey(p, a.Body), false
				for i, w := range wants {
					seen = seen || (bodies[i] == body && sameStatus(p, w.Status, a.Status))
				}
				if !seen {
					wants, bodies = append(wants, a), append(bodies, body)
					if len(wants) > 1 {
						f.example("attempt %d got %d %s", a.Client, a.Status, clip(a.Body))
						extra = append(extra, a)
					}
				}
			case unseen(a):
				lost++
			case a.Class == outcome.ServerError && gatewayStatus(a.Status):
				// A gateway's 5xx tells nothing of the operation's fate: a gateway in front
				// of the target answers 504 at its read timeout, or 503 for its own rate
				// limit, while the attempt executes or never arrives. The side-effect count
				// and the settle step judge what it hid, as for an answer nobody saw. A 500
				// is the target's own answer, and no refusal or replay.
				lost++
				failed5xx++
			case a.Class == outcome.InFlight && !p.Expect.InFlightWait:
				refused++
				refusedStatus = a.Status
			default:
				other++
				f.example("attempt %d got %s", a.Client, describe(a))
				others = append(others, a)
			}
		}
		unseenText := describeUnseen(answers)
		if failed5xx > 0 {
			text := fmt.Sprintf("%d got a 502, 503 or 504 (a gateway's or the target's: the operation's fate unknown)", failed5xx)
			if unseenText != "" {
				text = unseenText + ", " + text
			}
			unseenText = text
		}
		n, allowed := r.Ledger[verdict.LedgerOperation], allowedEffects(r, p)
		switch {
		case n > allowed:
			f.count(verdict.CatDuplicated, n-allowed)
			for _, a := range extra {
				f.blameAgainst(a, "the first success replayed, no second execution", &wants[0])
			}
			return f.result(verdict.Fail, "%d side effects from %d concurrent attempts with one key", n, len(answers))
		case len(wants) > max(n, 1):
			f.count(verdict.CatDiverged, len(wants)-max(n, 1))
			for _, a := range extra {
				f.blameAgainst(a, "the first success replayed, byte for byte", &wants[0])
			}
			// The first success need not be the execution. With one side effect, a status
			// only one success has is the execution's and one the others share the
			// replays'.
			executed, replayed, known := wants[0], extra[0], false
			if n == 1 {
				byStatus := map[int]int{}
				for _, a := range answers {
					if isSuccess(a) {
						byStatus[a.Status]++
					}
				}
				switch a, b := byStatus[executed.Status], byStatus[replayed.Status]; {
				case a == 1 && b > 1:
					known = true
				case b == 1 && a > 1:
					executed, replayed, known = replayed, executed, true
				}
			}
			role := "the first"
			if known {
				role = "the execution's"
			}
			return f.result(verdict.Fail, "%d successes carry %d different responses for %d side effect(s)%s", ok, len(wants), n, statusOnlyNote(p, executed, replayed, role, known))
		case ok > 0 && n == 0:
			f.count(verdict.CatFabricated, ok)
			return f.result(verdict.Fail, "%d successes but the ledger shows no side effect", ok)
		case other > 0 && p.Expect.InFlightWait:
			for _, a := range others {
				f.blame(a, "the replay after a wait")
			}
			return f.result(verdict.Fail, "%d attempts got neither the replay nor a wait (the profile declares in_flight: wait)", other)
		case other > 0:
			for _, a := range others {
				f.blame(a, wantText(p.Expect.InFlight, outcome.InFlight)+" or the replay")
			}
			refusal := "the outcome rules' in_flight"
			if p.Expect.InFlight != 0 {
				refusal = itoa(p.Expect.InFlight)
			}
			return f.result(verdict.Fail, "%d attempts got neither the in-flight refusal (%s) nor the replay%s", other, refusal, statusGuardNote(p, others, outcome.InFlight))
		case ok == 0 && lost == 0:
			f.count(verdict.CatStuck, 1)
			return f.result(verdict.Fail, "no attempt succeeded: %d refused with %s", refused, wantText(refusedStatus, outcome.InFlight))
		}
		settle, v, msg, failed := judgeSettle(r, p, &f, wants, true)
		if failed {
			return v, msg, f.ev
		}
		tail := ""
		if unseenText != "" {
			tail = "; " + unseenText
		}
		if throttledN := countClass(answers, outcome.Throttled); throttledN > 0 && inFlightAtOnce(r, step) < 2 {
			// Whatever the settle step shows, nothing concurrent reached the key.
			return f.result(verdict.Info, "%d of %d attempts were throttled (a rate limit refused them) and no two of the rest were in flight at once: nothing concurrent reached the key", throttledN, len(answers))
		}
		if ok == 0 {
			// Only the settle step can show the one result nobody saw.
			switch {
			case !settle.ran:
				return f.result(verdict.Unknown, "no answer showed the result: %d refused, %s", refused, unseenText)
			case !isSuccess(settle.last):
				return f.result(verdict.Fail, "no attempt was seen to succeed and the settle retry got %s", describe(settle.last))
			case n == 0:
				f.count(verdict.CatFabricated, 1)
				return f.result(verdict.Fail, "the settle retry got %d but the ledger shows no side effect", settle.last.Status)
			}
			return f.result(verdict.Pass, "one side effect from %d attempts: none seen to succeed (%d refused%s); the settle retry got %d",
				len(answers), refused, tail, settle.last.Status)
		}
		refusals := ""
		if !p.Expect.InFlightWait {
			refusals = fmtRefused(refused, refusedStatus, p.Expect.InFlight)
		}
		atOnce := inFlightAtOnce(r, step)
		if atOnce < 2 && len(answers) > 1 {
			return f.result(verdict.Info, "one side effect from %d attempts, but no two were ever in flight at once (each answered before the next was sent): nothing concurrent was exercised", len(answers))
		}
		tail += fmt.Sprintf("; up to %d in flight at once", atOnce)
		if n > 1 {
			return f.result(verdict.Pass, "%d side effects from %d attempts spanning %d retention windows (%s); %d successes carry %d responses%s%s",
				n, len(answers), allowed, p.Retention, ok, len(wants), refusals, tail)
		}
		successes := fmt.Sprintf("%d identical successes", ok)
		if ok == 1 {
			successes = "1 success"
		}
		return f.result(verdict.Pass, "one side effect from %d attempts: %s%s%s", len(answers), successes, refusals, tail)
	}
}

// noneRefusedIsInfo is a burst's checker: under a refusing school (expect.in_flight a
// status, not wait), a PASS in which no copy was refused becomes INFO. Every copy after
// the execution then met its key already committed — the target served the copies one
// after the other, or its work ended before the next copy looked the key up — which is
// what a check-then-set target shows too: no copy met another in flight, so the burst
// proved nothing about concurrent copies. race/concurrent-pair, which holds the work,
// is the scenario that makes them meet.
func noneRefusedIsInfo(judge Checker) Checker {
	return func(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
		v, msg, ev := judge(r, p)
		if v != verdict.Pass || p.Expect.InFlightWait {
			return v, msg, ev
		}
		answers := stepAnswers(r, "burst")
		if countClass(answers, outcome.InFlight) > 0 || countClass(answers, outcome.Success) < 2 {
			return v, msg, ev
		}
		return verdict.Info, fmt.Sprintf("no copy was refused with %s, which the profile declares for a repeat in flight: every copy after the execution met the key already committed (the target served them one after the other, or its work ended before the next copy arrived), so no copy met another in flight and nothing concurrent was proven (race/concurrent-pair holds the work to make copies meet); what it saw: %s",
			wantText(p.Expect.InFlight, outcome.InFlight), msg), ev
	}
}

// oneWinnerHeld is oneWinner for copies sent at once with the slow hook, so that they
// meet at the target: a PASS needs the journal to show them there together (one held
// while the other arrived). Without that the copies may have been served one after the
// other — a target that does not apply the hook answers each at once — and a
// check-then-set server would pass the same way.
func oneWinnerHeld(step string, copies int) Checker {
	judge := oneWinner(step)
	return func(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
		v, msg, ev := judge(r, p)
		if v != verdict.Pass || len(r.Journal) == 0 {
			return v, msg, ev
		}
		atTarget, longest := stepAtTarget(r, copies)
		if atTarget >= 2 {
			return v, msg, ev
		}
		why := fmt.Sprintf("the %d attempts were never at the target together (each was answered before the next reached it)", copies)
		if hold := slowHold(p); longest < hold*3/4 {
			why = holdMissedText("the work", longest, hold) + ", and " + why
		}
		return verdict.Unknown, why + ": nothing concurrent was exercised (what it saw: " + msg + ")", ev
	}
}

// duplicatesHeld is a duplicate delivery's checker that PASSes only when the journal
// shows the two copies at the target together. The proxy sends them at one moment (one
// from a goroutine, one from the exchange); the copy the client is answered by is then
// either refused as in flight (the other was running) or kept at the target for the
// slow hook's hold, executing or waiting for the other copy's work, while the other
// copy arrived. An answer well inside the hold means the hook held nothing: the first
// copy may have been answered before the second looked the key up, and a check-then-set
// server passes that way.
func duplicatesHeld(judge Checker) Checker {
	return func(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
		v, msg, ev := judge(r, p)
		if v != verdict.Pass {
			return v, msg, ev
		}
		var dup *faultproxy.Record
		for i, j := range r.Journal {
			if j.Fault == faultproxy.FaultDuplicate && j.ReachedUpstream {
				dup = &r.Journal[i]
				break
			}
		}
		if dup == nil || dup.UpstreamCalls < 2 {
			return verdict.Unknown, "the proxy did not deliver the request twice (the journal shows no duplicated delivery; a body over its buffer limit is sent once): nothing concurrent was exercised (what it saw: " + msg + ")", ev
		}
		if original, ok := stepAnswer(r, "original"); ok && original.Class == outcome.InFlight {
			return v, msg + "; the copies met at the target (one was refused in flight)", ev
		}
		// The journal times the copy whose answer the client got; the exchange ends only
		// when both copies have, so the client's wait for it bounds the other from
		// below when its answer is a stream the proxy ends last (an MCP server answers
		// a second copy of one JSON-RPC id at once, "duplicate in-flight request ID",
		// while the first is held).
		took, hold, _ := heldShort(*dup, p)
		if original, ok := stepAnswer(r, "original"); ok {
			if sent, ok := stepInvokedAt(r, "original"); ok && !unseen(original) {
				took = max(took, original.Time.Sub(sent))
			}
		}
		if took < hold*3/4 {
			return verdict.Unknown, holdMissedText("the duplicated request", took, hold) + ": the two copies may never have been at the target together, so nothing concurrent was exercised (what it saw: " + msg + ")", ev
		}
		return v, fmt.Sprintf("%s; the copies met at the target (sent together, one held there for %s of the %s hold)", msg, roundDuration(took), hold), ev
	}
}

// inFlightAtOnce is the most attempts of the step that had been sent and not yet
// answered at one time, from the history's invoke and completion events. An attempt a
// rate limit refused (throttled) is left out: it never reached the key's logic, so it
// raced nothing.
func inFlightAtOnce(r verdict.Record, step string) int {
	type event struct {
		at    time.Time
		delta int
	}
	type attemptID struct{ client, attempt int }
	throttled := map[attemptID]bool{}
	for _, op := range r.History {
		if op.Step == step && op.Type != verdict.OpInvoke && op.Class == outcome.Throttled {
			throttled[attemptID{op.Client, op.Attempt}] = true
		}
	}
	var events []event
	for _, op := range r.History {
		if op.Step != step || throttled[attemptID{op.Client, op.Attempt}] {
			continue
		}
		d := -1
		if op.Type == verdict.OpInvoke {
			d = 1
		}
		events = append(events, event{op.Time, d})
	}
	// At one instant completions count first: an answer at t and a send at t never met.
	sort.SliceStable(events, func(i, j int) bool {
		if events[i].at.Equal(events[j].at) {
			return events[i].delta < events[j].delta
		}
		return events[i].at.Before(events[j].at)
	})
	cur, most := 0, 0
	for _, e := range events {
		cur += e.delta
		most = max(most, cur)
	}
	return most
}

// fmtRefused names the refusals by status, and by class where the status is not the
// declared in-flight one (a refusal inside a 200 that the outcome rules recognise).
func fmtRefused(n, status, declared int) string {
	if n == 0 {
		return ", none refused"
	}
	if status != declared {
		return ", " + itoa(n) + " refused with " + wantText(status, outcome.InFlight)
	}
	return ", " + itoa(n) + " refused with " + itoa(status)
}

// overlap reports whether the repeat provably reached the target before the original
// could have committed. The repeat's upstream start is when the proxy forwarded it, as
// its journal record says (the proxy delayed it before forwarding); a proxy that does
// not record that bounds it by the answer time minus the upstream time it journaled (a
// server that makes the repeat wait keeps it upstream; one polled for its answer, whose
// answer the client read on resumed streams, makes that bound late). The original
// cannot commit before the proxy received it plus the declared slow_operation hold. A
// start before that is an overlap however late a loaded machine delivered the answers;
// otherwise the repeat may have met a committed key, and a replay is then what it should
// get. Without the journal records, the client's answer times are compared.
func overlap(r verdict.Record, p *profile.Profile) (repeat verdict.Op, original verdict.Op, ok bool) {
	return overlapOf(r, p, "repeat")
}

// overlapOf is overlap for the step that met the original (another principal's).
func overlapOf(r verdict.Record, p *profile.Profile, step string) (repeat verdict.Op, original verdict.Op, ok bool) {
	repeat, okR := stepAnswer(r, step)
	original, okO := stepAnswer(r, "original")
	if !okR || !okO {
		return repeat, original, false
	}
	arrival, commit := repeat.Time, original.Time
	for _, j := range r.Journal {
		switch {
		case j.Fault != faultproxy.FaultBeforeDelay || !j.ReachedUpstream:
		case j.ForwardedAfterMillis > 0:
			arrival = j.Time.Add(millisDuration(j.ForwardedAfterMillis))
		default:
			arrival = repeat.Time.Add(-millisDuration(j.UpstreamMillis))
		}
	}
	if _, notHeld := originalNotHeld(r, p, original); notHeld {
		return repeat, original, false // the hold that the commit is timed from never was
	}
	if first, ok := originalRecord(r); ok && slowHold(p) > 0 {
		commit = first.Time.Add(slowHold(p))
	}
	return repeat, original, arrival.Before(commit)
}

// noOverlapText is the UNKNOWN of an in-flight checker whose repeat met no running
// original: why, when the journal says the slow hook did not hold the original, else
// otherwise.
func noOverlapText(r verdict.Record, p *profile.Profile, original verdict.Op, otherwise string) string {
	if msg, notHeld := originalNotHeld(r, p, original); notHeld {
		return msg + "; so no repeat met the original running, and there is nothing to judge"
	}
	return otherwise
}

// gatewayStatus reports whether a 5xx is one a gateway or proxy in front of the target
// answers for it (502, 503, 504), not the application's own error.
func gatewayStatus(status int) bool {
	return status == http.StatusBadGateway || status == http.StatusServiceUnavailable || status == http.StatusGatewayTimeout
}

// releasedTogether reports whether the repeat's answer came right after the original's
// at the target (within a quarter of the hold, at least 100 ms): a repeat that was made
// to wait for the original, not one that happened to look its key up late.
func releasedTogether(r verdict.Record, p *profile.Profile, repeat, original verdict.Op) bool {
	end := original.Time
	if first, ok := originalRecord(r); ok && first.UpstreamMillis > 0 && answeredBy(first, original) {
		end = first.Time.Add(millisDuration(first.UpstreamMillis))
	}
	return repeat.Time.Sub(end) <= max(100*time.Millisecond, slowHold(p)/4)
}

// slowHold is the declared slow_operation hold (0 when not declared).
func slowHold(p *profile.Profile) time.Duration {
	if p.Slow == nil {
		return 0
	}
	return p.Slow.HoldDuration()
}

func millisDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

// answeredBy reports whether the original's answer is what its journal record's exchange
// carried, so that the exchange's upstream time is the work's. Not so when the proxy saw
// that exchange end without the answer (class info) and the client still had one: an
// MCP server closed the stream to be polled (SEP-1699) and answered on a later GET.
func answeredBy(j faultproxy.Record, original verdict.Op) bool {
	return j.Class != faultproxy.OutcomeInfo || unseen(original)
}

// repeatWentFirst reports whether the repeat, although sent later and delayed by the
// proxy, reached the target first and became the original (a loaded machine): the
// original was then refused as in flight or as a mismatch, marked as the replay while
// the repeat was not, or answered well inside its declared hold (under three quarters
// of it: a replay's speed, not a timer that fired a little early, as Node's may, nor a
// gateway's read timeout just short of the hold), so it never executed: a replay, or a
// gateway's quick 5xx that never let it reach the target.
// The order the in-flight scenarios need did not happen, so they have nothing to judge.
func repeatWentFirst(r verdict.Record, p *profile.Profile, original verdict.Op) bool {
	if original.Class == outcome.InFlight || original.Class == outcome.Mismatch {
		return true
	}
	if repeat, ok := stepAnswer(r, "repeat"); ok && replayMarked(original, p) && isSuccess(repeat) && !replayMarked(repeat, p) {
		return true
	}
	hold := slowHold(p)
	if j, ok := originalRecord(r); ok && hold > 0 && !unseen(original) &&
		answeredBy(j, original) && millisDuration(j.UpstreamMillis) < hold*3/4 {
		return true
	}
	return false
}

// bothRefused reports whether the original and the repeat were each refused, as in
// flight or as a mismatch, and returns the repeat. One of the two took the key first, and
// the request that holds its key is answered with its own result, never refused: in
// whichever order they came, the target refused the request it was running (a refusal
// that clears the key's record, and the running request then finds it gone). No timing
// enters this.
func bothRefused(r verdict.Record, original verdict.Op) (verdict.Op, bool) {
	repeat, ok := stepAnswer(r, "repeat")
	refused := func(a verdict.Op) bool { return a.Class == outcome.InFlight || a.Class == outcome.Mismatch }
	return repeat, ok && refused(original) && refused(repeat)
}

// bothRefusedFail is the MUST scenarios' verdict when bothRefused: the original was
// refused while it held its key.
func bothRefusedFail(f *finding, original, repeat verdict.Op, what string) (verdict.Verdict, string, verdict.Evidence) {
	f.example("original got %s, %s got %s", describe(original), what, describe(repeat))
	f.blame(original, "its own result: it held the key (or the "+what+" did, and should have run)")
	return f.result(verdict.Fail, "the original got %s and %s %s: one of the two held the key first and should have run, but both were refused; the target refused the request it was running", describe(original), what, describe(repeat))
}

// originalRecord is the journal record of the in-flight scenarios' original: the first
// record without a fault (the original ends before the steps after it start).
func originalRecord(r verdict.Record) (faultproxy.Record, bool) {
	var first *faultproxy.Record
	for i, j := range r.Journal {
		if j.Fault == "" && j.ReachedUpstream && (first == nil || j.Seq < first.Seq) {
			first = &r.Journal[i]
		}
	}
	if first == nil {
		return faultproxy.Record{}, false
	}
	return *first, true
}

// inFlightStatus judges the repeat during the original against the declared school:
// refused with expect.in_flight, or (in_flight: wait) made to wait and given the
// original's committed response.
func inFlightStatus(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
	if r.LedgerErr != "" {
		return unknownLedger(r)
	}
	var f finding
	if n, allowed := r.Ledger[verdict.LedgerOperation], allowedEffects(r, p); n > allowed {
		f.count(verdict.CatDuplicated, n-allowed)
		return f.result(verdict.Fail, "%d side effects for one key", n)
	}
	repeat, original, during := overlap(r, p)
	if _, both := bothRefused(r, original); both {
		return bothRefusedFail(&f, original, repeat, "the repeat")
	}
	if msg, notHeld := originalNotHeld(r, p, original); notHeld {
		return f.result(verdict.Unknown, "%s; so no repeat met the original running, and there is nothing to judge", msg)
	}
	if repeatWentFirst(r, p, original) {
		return f.result(verdict.Unknown, "the repeat reached the target before the original (the original got %s): no repeat during the original to judge", describe(original))
	}
	if p.Expect.InFlightWait {
		return inFlightWaited(r, p, &f, repeat, original, during)
	}
	var wants []verdict.Op
	if isSuccess(original) {
		wants = []verdict.Op{original}
	}
	if _, v, msg, failed := judgeSettle(r, p, &f, wants, true); failed {
		return v, msg, f.ev
	}
	switch {
	case repeat.Class == outcome.InFlight:
		return f.result(verdict.Pass, "the repeat during the original got %s", describe(repeat))
	case unseen(repeat):
		return f.result(verdict.Unknown, "the repeat's answer was not seen (%s): whether it was refused cannot be told", describe(repeat))
	case !during:
		return f.result(verdict.Unknown, "%s", noOverlapText(r, p, original, fmt.Sprintf("no overlap: the original (%s) finished before the repeat (%s) was answered", describe(original), describe(repeat))))
	}
	if isSuccess(repeat) && !sameResponse(p, repeat, original) && allowedEffects(r, p) > 1 {
		return f.result(verdict.Unknown, "%s: nothing to judge", mayBeLate("the repeat", p))
	}
	if isSuccess(repeat) && isSuccess(original) && sameResponse(p, repeat, original) && !releasedTogether(r, p, repeat, original) {
		// The committed response itself, answered well after the original: the repeat
		// reached the target while the original ran, but the target may have looked its
		// key up only after the commit (a target that does other work first), and a
		// replay is then the right answer. A repeat released with the original is the
		// block-and-replay school's wait, which the declared 409 rules out.
		return f.result(verdict.Unknown, "the repeat reached the target during the original but got the original's committed response (%d), identical: the target may have looked its key up only after the commit, so whether it refuses a repeat in flight cannot be told", repeat.Status)
	}
	if isSuccess(repeat) && isSuccess(original) && sameResponse(p, repeat, original) {
		if held, hold, short := repeatHeldShort(r, p); short {
			// Released with the original, but the target had the repeat only briefly:
			// the proxy forwarded it just before the commit and the target's key lookup
			// may have come just after it (a loaded machine delays a request between
			// the socket and the handler), where a replay is right. A target that makes
			// repeats wait holds one sent a quarter into the hold for most of it.
			return f.result(verdict.Unknown, "the repeat got the original's committed response (%d) right after it, but the target had the repeat for only %s of the %s hold: it may have looked the key up just after the commit, where a replay is right, so whether it refuses a repeat in flight cannot be told", repeat.Status, roundDuration(held), hold)
		}
	}
	f.example("repeat got %s while the original ran", describe(repeat))
	f.blame(repeat, wantText(p.Expect.InFlight, outcome.InFlight))
	return f.result(verdict.Fail, "the repeat during the original got %s, want %s%s", describe(repeat), wantText(p.Expect.InFlight, outcome.InFlight), statusGuardNote(p, []verdict.Op{repeat}, outcome.InFlight))
}

// repeatHeldShort reports whether the journal shows the target answered the in-flight
// scenarios' repeat within half the declared hold of its forwarding: too briefly for a
// target that made it wait for the original (one sent a quarter into the hold waits most
// of it), the time it had it, and the hold. False without a journal record or a hold.
func repeatHeldShort(r verdict.Record, p *profile.Profile) (held, hold time.Duration, short bool) {
	j, ok := repeatRecord(r)
	hold = slowHold(p)
	if !ok || hold == 0 || j.UpstreamMillis <= 0 {
		return 0, hold, false
	}
	held = millisDuration(j.UpstreamMillis)
	return held, hold, held < hold/2
}

// inFlightWaited: under in_flight: wait, the repeat that met the original must get the
// original's committed response, identical, and nothing else.
func inFlightWaited(r verdict.Record, p *profile.Profile, f *finding, repeat, original verdict.Op, during bool) (verdict.Verdict, string, verdict.Evidence) {
	switch {
	case unseen(original):
		return f.result(verdict.Unknown, "the original's answer was not seen (%s): no committed response to compare", describe(original))
	case !isSuccess(original):
		return f.result(verdict.Unknown, "the original did not succeed (%s): no committed response to wait for", describe(original))
	}
	if _, v, msg, failed := judgeSettle(r, p, f, []verdict.Op{original}, true); failed {
		return v, msg, f.ev
	}
	switch {
	case unseen(repeat):
		return f.result(verdict.Unknown, "the repeat's answer was not seen (%s): whether it waited for the replay cannot be told", describe(repeat))
	case !isSuccess(repeat):
		f.example("repeat got %s while the original ran", describe(repeat))
		f.blame(repeat, "wait, then the committed "+itoa(original.Status))
		return f.result(verdict.Fail, "the repeat during the original got %s; the profile declares in_flight: wait (wait, then the committed response)", describe(repeat))
	case !sameResponse(p, repeat, original) && allowedEffects(r, p) > 1:
		return f.result(verdict.Unknown, "the repeat that waited got %d with another body than the original's, but %s: nothing to judge", repeat.Status, mayBeLate("it", p))
	case !sameResponse(p, repeat, original):
		f.count(verdict.CatDiverged, 1)
		f.example("original: %d %s", original.Status, clip(original.Body))
		f.example("repeat:   %d %s", repeat.Status, clip(repeat.Body))
		f.blameAgainst(repeat, "the committed "+itoa(original.Status)+", byte for byte", &original)
		return f.result(verdict.Fail, "the repeat that waited got %d with another body than the original's committed response%s", repeat.Status, uniqueNote(p, original, repeat))
	case !during:
		return f.result(verdict.Unknown, "no overlap: the original (%s) finished before the repeat reached the target, so it had nothing to wait for", describe(original))
	}
	return f.result(verdict.Pass, "the repeat during the original waited and got the committed %d (%d identical body bytes), as in_flight: wait declares", repeat.Status, len(repeat.Body))
}

func inFlightNotFabricated(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
	if r.LedgerErr != "" {
		return unknownLedger(r)
	}
	var f finding
	if n, allowed := r.Ledger[verdict.LedgerOperation], allowedEffects(r, p); n > allowed {
		f.count(verdict.CatDuplicated, n-allowed)
		return f.result(verdict.Fail, "%d side effects for one key", n)
	}
	// A success for the repeat that is the original's exact response is a replay, even
	// when it reached the client a moment before the original's own answer (a server
	// that makes the repeat wait releases both at once); anything else delivered first
	// was made up.
	repeat, _ := stepAnswer(r, "repeat")
	original, _ := stepAnswer(r, "original")
	if _, both := bothRefused(r, original); both {
		return f.result(verdict.Pass, "the repeat got %s; nothing was fabricated (the original was refused too, %s: race/in-flight-409 judges that)", describe(repeat), describe(original))
	}
	if repeatWentFirst(r, p, original) {
		if msg, notHeld := originalNotHeld(r, p, original); notHeld {
			return f.result(verdict.Unknown, "%s; so no repeat met the original running, and there is nothing to judge", msg)
		}
		return f.result(verdict.Unknown, "the repeat reached the target before the original (the original got %s): no repeat during the original to judge", describe(original))
	}
	if unseen(original) && isSuccess(repeat) {
		// When the original finished is unknown; the repeat's success is no fabrication
		// when it is the committed response, which the settle step replays.
		settle := settledOf(r, p)
		switch {
		case r.Ledger[verdict.LedgerOperation] == 0:
			f.count(verdict.CatFabricated, 1)
			f.blame(repeat, "no success without an execution")
			return f.result(verdict.Fail, "the repeat got %d but nothing executed: the ledger is empty", repeat.Status)
		case settle.ran && isSuccess(settle.last) && sameResponse(p, settle.last, repeat):
			return f.result(verdict.Pass, "the repeat got %d, the committed response (the settle retry replays it identically); the original's answer was not seen (%s)", repeat.Status, describe(original))
		}
		return f.result(verdict.Unknown, "the original's answer was not seen (%s): whether the repeat's %d came before it finished cannot be told", describe(original), repeat.Status)
	}
	replay := isSuccess(original) && sameResponse(p, repeat, original)
	if isSuccess(repeat) && repeat.Time.Before(original.Time) && !replay && allowedEffects(r, p) > 1 {
		return f.result(verdict.Unknown, "%s: nothing to judge", mayBeLate("the repeat", p))
	}
	if isSuccess(repeat) && repeat.Time.Before(original.Time) && !replay {
		f.count(verdict.CatFabricated, 1)
		f.example("repeat got %d %s before the original answered", repeat.Status, clip(repeat.Body))
		f.blame(repeat, wantText(p.Expect.InFlight, outcome.InFlight)+" or the committed response")
		return f.result(verdict.Fail, "a %d was delivered for the repeat while the original was still running", repeat.Status)
	}
	var wants []verdict.Op
	if isSuccess(original) {
		wants = []verdict.Op{original}
	}
	if _, v, msg, failed := judgeSettle(r, p, &f, wants, true); failed {
		return v, msg, f.ev
	}
	if unseen(repeat) {
		return f.result(verdict.Pass, "the repeat's answer was not seen (%s); nothing was delivered before the original finished, one side effect", describe(repeat))
	}
	if _, _, during := overlap(r, p); !during {
		// The repeat met a finished original (a loaded machine delayed it): there was
		// nothing to fabricate, so its answer proves nothing about the invariant.
		return f.result(verdict.Unknown, "%s", noOverlapText(r, p, original, fmt.Sprintf("no overlap: the original (%s) had finished before the repeat (%s) reached the target: nothing was there to fabricate", describe(original), describe(repeat))))
	}
	if repeat.Status >= 200 && repeat.Status <= 299 && repeat.Class == outcome.ClientError {
		// A 2xx the rules do not name: a client may well read it as the operation done
		// (a GraphQL payload with a null result and no errors).
		return f.result(verdict.Unknown, "the repeat got %s, a %d the profile's outcome rules do not name: whether a client takes it for a success cannot be told; name it in outcomes: (as success:, or as the refusal it is)", describe(repeat), repeat.Status)
	}
	return f.result(verdict.Pass, "the repeat got %s; nothing was fabricated", describe(repeat))
}

// inFlightOriginalFails: the original is held and then fails, so whatever the repeat was
// told while it ran came before any outcome existed. A success for the repeat is honest
// only as its own execution, once the original had failed; a success while nothing ever
// executed was promised in advance (a server that answers a repeat in flight with the
// response it expects the original to produce). That needs no timing: the original's
// failure and the empty ledger prove it.
func inFlightOriginalFails(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
	if r.LedgerErr != "" {
		return unknownLedger(r)
	}
	var f finding
	repeat, _ := stepAnswer(r, "repeat")
	original, _ := stepAnswer(r, "original")
	n := r.Ledger[verdict.LedgerOperation]
	if n > 1 {
		f.count(verdict.CatDuplicated, n-1)
		return f.result(verdict.Fail, "%d side effects for one key", n)
	}
	switch {
	case unseen(original):
		return f.result(verdict.Unknown, "the original's answer was not seen (%s): whether it failed cannot be told", describe(original))
	case isSuccess(original) && isSuccess(repeat) && n == 1 && sameResponse(p, original, repeat) && replayMarked(original, p) && !replayMarked(repeat, p):
		// The original's answer is marked as a replay and the repeat's is not: the repeat
		// executed (the one side effect) while the original's work ran, and the original
		// was answered its committed result — a target that holds nothing in flight while
		// work that fails runs (one that commits its key with its work, in one transaction).
		// Nothing was promised before it happened.
		return f.result(verdict.Pass, "the repeat executed on its own while the original ran (its %d is no replay; one side effect), and the original was answered the repeat's committed response as a replay (%s): nothing was promised before it happened", repeat.Status, p.Expect.ReplayHeader)
	case isSuccess(original) && isSuccess(repeat) && n == 1 && sameResponse(p, original, repeat):
		return f.result(verdict.Unknown, "the original got the same %d as the repeat: either the repeat executed while the original's work ran and the original was answered its result, or the repeat was promised the original's result before it existed; nothing here tells them apart (a replay marker would: declare expect.replay_header if the target sends one)", original.Status)
	case isSuccess(original):
		return f.result(verdict.Unknown, "the original got %s: slow_operation and fail_operation together did not make it fail (does the target apply both to one request?)", describe(original))
	}
	_, _, during := overlap(r, p)
	switch {
	case isSuccess(repeat) && n == 0:
		f.count(verdict.CatFabricated, 1)
		f.example("repeat got %d %s while the original ran", repeat.Status, clip(repeat.Body))
		f.example("original then got %s; the ledger shows no side effect", describe(original))
		f.blame(repeat, wantText(p.Expect.InFlight, outcome.InFlight)+", or its own execution once the original had failed")
		return f.result(verdict.Fail, "the repeat got %s while the original ran, but the original then failed (%s) and nothing executed: the client was told of an operation that never happened", describe(repeat), describe(original))
	case !during:
		return f.result(verdict.Unknown, "%s", noOverlapText(r, p, original, fmt.Sprintf("no overlap: the original (%s) had finished before the repeat (%s) reached the target: nothing was there to promise", describe(original), describe(repeat))))
	case isSuccess(repeat):
		return f.result(verdict.Pass, "the repeat got %s with a side effect of its own (it ran once the original had failed: %s); %s", describe(repeat), describe(original), failTimes(r, p, original, repeat))
	case unseen(repeat):
		return f.result(verdict.Pass, "the repeat's answer was not seen (%s), the original failed (%s): no success was claimed; %s", describe(repeat), describe(original), failTimes(r, p, original, repeat))
	case answeredBefore(r, p, repeat, original):
		return f.result(verdict.Pass, "the repeat got %s while the original ran, and the original then failed (%s): no success was claimed; %s", describe(repeat), describe(original), failTimes(r, p, original, repeat))
	}
	// Answered after the original's failure: a target that made the repeat wait (or
	// replays the stored failure) told it the failure, which is no success either.
	return f.result(verdict.Pass, "the repeat met the original running and got %s once the original had failed (%s): no success was claimed; %s", describe(repeat), describe(original), failTimes(r, p, original, repeat))
}

// failTimes says when, from the original's send, the repeat was sent, the original failed
// and the repeat was answered (as the client saw them), so that a reader sees which came
// first.
func failTimes(r verdict.Record, p *profile.Profile, original, repeat verdict.Op) string {
	start, ok := stepInvokedAt(r, "original")
	if !ok {
		return "times not recorded"
	}
	at := func(t time.Time) string { return "+" + roundDuration(t.Sub(start)).String() }
	sent := ""
	if t, ok := stepInvokedAt(r, "repeat"); ok {
		sent = "the repeat was sent at " + at(t) + ", "
	}
	answered := "the repeat was answered at " + at(repeat.Time)
	if unseen(repeat) {
		answered = "the repeat ended unseen at " + at(repeat.Time)
	}
	return fmt.Sprintf("%sthe original failed at %s, %s (from the original's send; slow_operation holds %s)", sent, at(original.Time), answered, slowHold(p))
}

func inFlightRetryAfter(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
	var f finding
	repeat, _ := stepAnswer(r, "repeat")
	if repeat.Class != outcome.InFlight {
		return f.result(verdict.Unknown, "the repeat got %s, not %s: no in-flight answer to inspect", describe(repeat), wantText(p.Expect.InFlight, outcome.InFlight))
	}
	if _, v, msg, failed := judgeSettle(r, p, &f, nil, true); failed {
		return v, msg, f.ev
	}
	if hint, wait, ok := outcome.RetryAfterIn(p.Classifier(), opAnswer(repeat)); hint != nil {
		// The profile says where this refusal tells when to retry: a header would do as
		// well, but the body is where the API's clients look.
		switch {
		case ok:
			return f.result(verdict.Pass, "the in-flight refusal (%d) says when to retry in its body: %s = %s", repeat.Status, hint.Path, wait)
		case repeat.Headers["Retry-After"] != "" && retryAfterSyntax(repeat.Headers["Retry-After"]) == "":
			return f.result(verdict.Pass, "the in-flight refusal (%d) carries Retry-After: %s (not the body's %s its in_flight rule declares)", repeat.Status, repeat.Headers["Retry-After"], hint)
		}
		return f.result(verdict.NonStrict, "the in-flight refusal (%d) lacks the retry hint its in_flight rule declares: no number of at least 0 at %s", repeat.Status, hint)
	}
	if v := repeat.Headers["Retry-After"]; repeat.Status < 400 && v != "" {
		// A refusal inside a 2xx that says when to come back all the same.
		if why := retryAfterSyntax(v); why != "" {
			return f.result(verdict.NonStrict, "the in-flight refusal (a %d the profile's outcome rules recognise) carries a malformed Retry-After: %s", repeat.Status, why)
		}
		return f.result(verdict.Pass, "the in-flight refusal (a %d the profile's outcome rules recognise) carries Retry-After: %s", repeat.Status, v)
	}
	if repeat.Status < 400 {
		// A refusal found inside a 2xx (a JSON-RPC error object): Retry-After belongs to
		// HTTP's 429 and 503 and to error responses, not to a 200's payload.
		return f.result(verdict.Info, "the in-flight refusal is a %d that the profile's outcome rules recognise: no HTTP refusal to carry a Retry-After (if its body says when to retry, declare where with retry_after on the in_flight rule, e.g. {path: error.data.retry_after_ms, unit: ms})", repeat.Status)
	}
	if v := repeat.Headers["Retry-After"]; v != "" {
		if why := retryAfterSyntax(v); why != "" {
			return f.result(verdict.NonStrict, "the %d carries a malformed Retry-After: %s", repeat.Status, why)
		}
		return f.result(verdict.Pass, "the %d carries Retry-After: %s", repeat.Status, v)
	}
	return f.result(verdict.NonStrict, "the %d carries no Retry-After", repeat.Status)
}

func inFlightOtherPayload(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
	if r.LedgerErr != "" {
		return unknownLedger(r)
	}
	var f finding
	if n, allowed := r.Ledger[verdict.LedgerOperation], allowedEffects(r, p); n > allowed {
		f.count(verdict.CatDuplicated, n-allowed)
		return f.result(verdict.Fail, "another payload executed during the original: %d side effects", n)
	}
	repeat, _ := stepAnswer(r, "repeat")
	original, _ := stepAnswer(r, "original")
	if _, both := bothRefused(r, original); both {
		return bothRefusedFail(&f, original, repeat, "the other payload")
	}
	if repeatWentFirst(r, p, original) {
		if msg, notHeld := originalNotHeld(r, p, original); notHeld {
			return f.result(verdict.Unknown, "%s; so the other payload met no original running, and there is nothing to judge (fingerprint/mismatch judges another payload after the original)", msg)
		}
		return f.result(verdict.Unknown, "the other payload reached the target before the original (the original got %s): no repeat during the original to judge", describe(original))
	}
	if isSuccess(repeat) && allowedEffects(r, p) > 1 {
		return f.result(verdict.Unknown, "%s: nothing to judge", mayBeLate("the other payload", p))
	}
	if isSuccess(repeat) {
		f.count(verdict.CatLeaked, 1)
		f.example("other payload got %d %s", repeat.Status, clip(repeat.Body))
		f.blame(repeat, wantText(p.Expect.Mismatch, outcome.Mismatch)+" or "+wantText(p.Expect.InFlight, outcome.InFlight))
		return f.result(verdict.Fail, "another payload was answered %d", repeat.Status)
	}
	var wants []verdict.Op
	if isSuccess(original) {
		wants = []verdict.Op{original}
	}
	if _, v, msg, failed := judgeSettle(r, p, &f, wants, true); failed {
		return v, msg, f.ev
	}
	if _, _, during := overlap(r, p); !during {
		return f.result(verdict.Unknown, "%s", noOverlapText(r, p, original, fmt.Sprintf("no overlap: the original (%s) had finished before the other payload (%s) reached the target: nothing ran for it to meet", describe(original), describe(repeat))))
	}
	return f.result(verdict.Pass, "another payload during the original got %s and did not execute", describe(repeat))
}

// countClass counts the answers of one class.
func countClass(ops []verdict.Op, c outcome.Class) int {
	n := 0
	for _, op := range ops {
		if op.Type != verdict.OpInvoke && op.Class == c {
			n++
		}
	}
	return n
}

package scenarios

import (
	"fmt"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/verdict"
)

// srcStdio is the MCP stdio transport: a server is a process its client starts, and a
// host restarts a server that died.
const srcStdio = "MCP 2025-11-25, Transports: stdio"

// afterRestart is the crash after commit of a stdio server: the process is killed the
// moment it has written the committed result (the answer lost with it), the next
// request starts it again, and the retry with the same key must find the key it kept —
// if its keys are declared to survive a restart (expect.durable_keys). An in-memory key
// store forgets, and the retry executes again: a FAIL when durability is declared, the
// observed behaviour (INFO) when it is not.
func afterRestart() Scenario {
	return Scenario{
		ID:          "replay/after-restart",
		Description: "the server process is killed right after it committed (its answer lost with it) and started again; the retry gets the committed result",
		Requirement: "with expect.durable_keys, a key survives a restart of the server: the retry after the crash replays, one side effect; without the declaration, what the retry did is reported",
		Source:      and(srcStdio, srcSeed),
		Level:       verdict.LevelPolicy,
		Labels:      []string{"group:replay", "fault:after-upstream", "level:policy", "transport:stdio"},
		Needs:       []profile.Capability{profile.CapServerRestart},
		Faults:      []FaultOn{{Attempts: firstAttempt, Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterKill}}},
		Steps:       []Step{{Name: "original"}, {Name: "retry", CountBefore: true}},
		Check:       keysSurviveRestart,
	}
}

// keysSurviveRestart judges replay/after-restart. The kill's record holds what the
// server committed; the ledger read after the restart says whether the server's effects
// survived it; the retry's answer and the ledger after it say whether the key did.
func keysSurviveRestart(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
	var f finding
	if r.LedgerErr != "" {
		return unknownLedger(r)
	}
	var kill *faultproxy.Record
	for i := range r.Journal {
		if r.Journal[i].Fault == faultproxy.FaultAfterKill {
			kill = &r.Journal[i]
		}
	}
	switch {
	case kill == nil:
		return f.result(verdict.Unknown, "the original was not killed (no after-kill in the journal): nothing to judge")
	case kill.UpstreamStatus == 0:
		return f.result(verdict.Unknown, "the server ended before it answered the original (%s): no commit to survive the restart", kill.Note)
	}
	committed := kill.UpstreamBody
	if cl := p.Classifier(); cl.Classify(outcome.Answer{Status: kill.UpstreamStatus, Body: committed}) != outcome.Success {
		return f.result(verdict.Unknown, "the original was not a success before the kill (%s): there is no committed result to replay", clip(committed))
	}
	retry, ok := stepAnswer(r, "retry")
	if !ok {
		return f.result(verdict.Unknown, "the retry never answered")
	}
	if unseen(retry) {
		return f.result(verdict.Unknown, "the retry after the restart was not seen (%s): whether the key survived cannot be told", describe(retry))
	}
	mid, after := r.LedgerBefore["retry"], r.Ledger[verdict.LedgerOperation]
	declared := p.DurableKeys()
	forgot := func(format string, args ...any) (verdict.Verdict, string, verdict.Evidence) {
		f.count(verdict.CatDuplicated, 1)
		f.blameAgainst(retry, "the result committed before the kill", &verdict.Op{Status: kill.UpstreamStatus, Body: committed})
		msg := "the key did not survive the restart of the server: " + fmt.Sprintf(format, args...)
		if !declared {
			return f.result(verdict.Info, "%s; the profile does not declare expect.durable_keys, so this is the server's policy, reported: an agent that retries after its server crashed gets the effect twice", msg)
		}
		return f.result(verdict.Fail, "%s, while the profile declares expect.durable_keys", msg)
	}
	switch {
	case after > mid:
		f.example("the ledger read %d once the server was started again, %d after the retry", mid, after)
		if mid == 0 {
			return forgot("the retry executed again (the ledger, which also forgot the committed effect, counts %d after it)", after)
		}
		return forgot("the retry executed again: %d side effects for one key", after)
	case !isSuccess(retry):
		f.blameAgainst(retry, "the result committed before the kill", &verdict.Op{Status: kill.UpstreamStatus, Body: committed})
		v := verdict.Fail
		if !declared {
			v = verdict.Info
		}
		return f.result(v, "the retry after the restart got %s, not the result committed before the kill", describe(retry))
	case !sameBody(p, retry.Body, committed):
		f.example("committed before the kill: %s", clip(committed))
		f.example("the retry got: %s", clip(retry.Body))
		if mid == 0 && after == 0 {
			// Nothing the server kept counts anything: a new result is a new execution
			// whose effect vanished with the state, or a replay that differs.
			return forgot("the retry got another result than the one committed before the kill, and the ledger kept nothing across the restart")
		}
		f.count(verdict.CatDiverged, 1)
		f.blameAgainst(retry, "the result committed before the kill, byte for byte", &verdict.Op{Status: kill.UpstreamStatus, Body: committed})
		return f.result(verdict.Fail, "the retry after the restart differs from the result committed before the kill")
	case mid == 0:
		return f.result(verdict.Unknown, "the retry got the committed result, but the server's ledger kept nothing across the restart (it read 0): one execution or a result that comes out the same cannot be told apart")
	}
	return f.result(verdict.Pass, "the key survived the restart: the retry after the kill got the result committed before it; one side effect")
}

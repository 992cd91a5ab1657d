package scenarios

import (
	"context"
	"net/http"
	"time"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/transport"
)

// polledWorkPoll is how often awaitPolledWork reads the ledger.
const polledWorkPoll = 100 * time.Millisecond

// awaitPolledWork restores a replay scenario's premise over MCP before its next step.
// The premise is that the first attempt committed and only its answer was lost. A server
// that closes an answer's event stream for the client to poll (SEP-1699) sends its 200
// with only a priming event while the tool still runs, and a fault that takes that
// answer away hid no committed response: a retry sent at once meets the tool in flight,
// which proves nothing about the key (UNKNOWN). A real client resumes and waits for the
// result before it would retry. So when the journal holds such an answer, this waits
// (at most client_timeout) until the ledger shows the work's effect, and the retry then
// meets a committed key, as the scenario means. The journal keeps its note, so the
// checkers still know that answer was never a committed response.
func (e *execution) awaitPolledWork(ctx context.Context, base int) {
	if e.t.p.Transport != profile.TransportMCP || !e.polledAnswerLost(ctx) {
		return
	}
	entity := e.entity
	if e.t.p.SideEffects.Global() {
		entity = ""
	}
	deadline := time.Now().Add(e.t.p.ClientTimeout.Std())
	for time.Now().Before(deadline) {
		if n, err := e.t.readLedger(ctx, e.t.p.SideEffects, entity); err == nil && n-base >= 1 {
			return
		}
		if !transport.Sleep(ctx, polledWorkPoll) {
			return
		}
	}
}

// polledAnswerLost reports whether a fault so far acted on an answer that held no
// response: a 2xx whose body, as the transport reads it, is no JSON-RPC response.
func (e *execution) polledAnswerLost(ctx context.Context) bool {
	keys, _ := e.journalKeys(e.rec.history())
	if len(keys) == 0 {
		return false
	}
	recs, err := e.t.journalOfKeys(ctx, keys)
	if err != nil {
		return false
	}
	for _, j := range recs {
		if actsOnTheAnswer(j.Fault) && j.UpstreamStatus >= http.StatusOK && j.UpstreamStatus <= 299 &&
			len(j.UpstreamBody) > 0 && j.UpstreamBodyClipped == 0 && e.t.tr.Comparable(j.UpstreamBody, j.UpstreamContentEncoding) == nil {
			return true
		}
	}
	return false
}

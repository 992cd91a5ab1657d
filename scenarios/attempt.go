package scenarios

import (
	"context"
	"net/http"
	"time"

	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/transport"
	"github.com/idemproof/idemproof/verdict"
)

// sendAttempt performs one attempt through the target's transport and returns its
// completion event, typed by its outcome class: ok for a success, fail for a refusal or
// a business error, info for anything whose outcome the client cannot know (a server
// error, reset, closed, truncated, timed out, an event stream cut before the answer). An
// error means the attempt could not be made at all (an MCP session could not be set up).
func (t *target) sendAttempt(ctx context.Context, s transport.Sender, req *transport.Request, timeout time.Duration) (verdict.Op, error) {
	a, err := s.Send(ctx, req, timeout)
	if err != nil {
		return verdict.Op{Type: verdict.OpInfo, Error: "not sent: " + err.Error(), Class: outcome.Info}, err
	}
	return answerOp(a, t.keepHeaders()), nil
}

// send performs one plain HTTP attempt on the given client — for steps that must choose
// the client themselves (connection reuse) — and returns its completion event, typed as
// sendAttempt types it.
func send(ctx context.Context, c *http.Client, req *http.Request, timeout time.Duration, keep []string, cl outcome.Classifier) verdict.Op {
	return answerOp(transport.Do(ctx, c, req, timeout, cl, nil), keep)
}

// answerOp is the completion event of an answer.
func answerOp(a transport.Answer, keep []string) verdict.Op {
	op := verdict.Op{Status: a.Status, Body: a.Body, Headers: pickHeaders(a.Header, keep), Error: a.Err, Class: a.Class,
		RPCID: a.RPCID, RPCMethod: a.RPCMethod, RequestSHA256: a.RequestSHA256, PayloadSHA256: a.PayloadSHA256}
	switch {
	case !a.Class.Determinate(), a.Class == outcome.ServerError:
		op.Type = verdict.OpInfo
	case a.Class == outcome.Success:
		op.Type = verdict.OpOK
	case a.Status >= 300 && a.Status <= 399:
		// A redirect (not followed) is no result of the operation the checkers can use.
		op.Type = verdict.OpInfo
	default:
		op.Type = verdict.OpFail
	}
	return op
}

func pickHeaders(h http.Header, keep []string) map[string]string {
	out := map[string]string{}
	for _, k := range keep {
		if v, ok := h[http.CanonicalHeaderKey(k)]; ok && len(v) > 0 {
			out[k] = v[0]
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// opAnswer is the answer an op records, for classing it again: its status, body and the
// headers the runner kept (keepHeaders: those the outcome rules read among them).
func opAnswer(op verdict.Op) outcome.Answer {
	a := outcome.Answer{Status: op.Status, Body: op.Body}
	if len(op.Headers) > 0 {
		a.Header = http.Header{}
		for k, v := range op.Headers {
			a.Header.Set(k, v)
		}
	}
	return a
}

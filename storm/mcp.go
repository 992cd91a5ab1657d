package storm

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/retryhttp"
	"github.com/idemproof/idemproof/transport"
)

// An MCP tool server (transport: mcp, Streamable HTTP) is stormed through the same
// proxy with the runner's MCP transport: each copy is a client of its own (its own
// session), the tools/call carries the key where key_field says (params._meta…), and an
// answer means what the profile's outcome rules say, a JSON-RPC error inside a 200
// included. The HTTP status alone cannot tell a refusal from a result there, so the copy
// retries by outcome class, as retryhttp does by status, and honours the retry hint the
// rules read from a JSON-RPC error as it honours Retry-After.

// mcpRequest frames one copy's tools/call: the operation's arguments for entity, the
// slow hook when the copy is held (a field hook lands in the JSON-RPC request, as the
// scenarios put it), and the key. Every attempt of the copy sends these bytes.
func (s *storm) mcpRequest(entity, key string, hold bool) (*transport.Request, error) {
	p := s.p
	path, err := profile.Render(p.Operation.Path, entity)
	if err != nil {
		return nil, err
	}
	args, err := profile.Render(p.Operation.Body, entity)
	if err != nil {
		return nil, err
	}
	framed, err := s.tr.Frame(p.Operation.Tool, []byte(args))
	if err != nil {
		return nil, err
	}
	header, err := p.RequestHeaders(p.Operation.Headers, 0, entity)
	if err != nil {
		return nil, err
	}
	body := string(framed)
	if hold {
		if path, body, err = p.ApplySlowHook(path, header, body, entity); err != nil {
			return nil, err
		}
	}
	if body, err = bodyWithKey(body, p.KeyField, key); err != nil {
		return nil, err
	}
	header.Set("Content-Type", "application/json")
	return &transport.Request{URL: strings.TrimSuffix(s.proxyURL, "/") + path, Header: header, Body: []byte(body),
		Session: "storm", SessionHeader: p.SessionHeader(0)}, nil
}

// retriedClass reports whether a correct client sends the call again after an answer of
// class c: the outcome unknown (timeout, reset, a cut stream), the key in flight, a rate
// limit, a server error. Anything else is a definite answer.
func retriedClass(c outcome.Class) bool {
	switch c {
	case outcome.Info, outcome.InFlight, outcome.Throttled, outcome.ServerError:
		return true
	}
	return false
}

// sendMCP runs one copy over MCP: attempts until a definite answer or s.cfg.Attempts,
// with the backoff of the HTTP copies (Retry-After honoured when the answer carries one).
// With outage, the copy's first retry meets that store fault, healed before its second.
func (s *storm) sendMCP(ctx context.Context, outage bool, fault string, req *transport.Request, key string, attempts *atomic.Int64) answer {
	snd := s.tr.Open()
	defer snd.Close()
	backoff := retryhttp.HonourRetryAfter(retryhttp.Exponential(retryBackoffMin, s.cfg.MaxBackoff), s.cfg.MaxBackoff)
	var release func()
	defer func() {
		if release != nil {
			release()
		}
	}()
	var last transport.Answer
	tries := 0
	for tries < s.cfg.Attempts && ctx.Err() == nil {
		a, err := snd.Send(ctx, req, s.p.ClientTimeout.Std())
		if err != nil {
			// The session could not be set up: nothing of this attempt reached the tool.
			return answer{err: "not sent: " + err.Error()}
		}
		tries++
		attempts.Add(1)
		last = a
		if !retriedClass(a.Class) {
			return s.mcpAnswer(a)
		}
		if tries == s.cfg.Attempts {
			break
		}
		if err := retryhttp.SleepContext(ctx, s.mcpBackoff(backoff, tries, a)); err != nil {
			break
		}
		if outage {
			switch tries {
			case 1:
				release = s.storeOutage(fault)
			case 2:
				release()
				release = nil
			}
		}
	}
	why := string(last.Class)
	if last.Err != "" {
		why = last.Err
	}
	return answer{status: last.Status, err: fmt.Sprintf("outcome unknown after %d attempt(s) with key %s: last %s", tries, key, why)}
}

// mcpBackoff is the pause after an answer: the capped exponential backoff, or the wait
// the answer asks for when longer (a Retry-After header, or the retry hint the profile's
// outcome rules read from a JSON-RPC error), capped at MaxBackoff as over HTTP.
func (s *storm) mcpBackoff(backoff retryhttp.Backoff, tries int, a transport.Answer) time.Duration {
	d := backoff(tries, &http.Response{Header: a.Header})
	if _, wait, ok := outcome.RetryAfterIn(s.cl, outcome.Answer{Status: a.Status, Header: a.Header, Body: a.Body}); ok && wait > d {
		d = min(wait, s.cfg.MaxBackoff)
	}
	return d
}

// mcpAnswer is a definite MCP answer as the judge reads it: its class decides success,
// its comparable body (the JSON-RPC response without its id) is digested.
func (s *storm) mcpAnswer(a transport.Answer) answer {
	return answer{status: a.Status, class: a.Class, digest: s.digest(a.Body), excerpt: excerpt(a.Body)}
}

// mcpCommitted reads a journal record of an MCP call: whether the upstream's answer was
// a success by the profile's rules, and its comparable body.
func (s *storm) mcpCommitted(r faultproxy.Record) (body []byte, success bool) {
	if r.UpstreamStatus == 0 || len(r.UpstreamBody) == 0 || r.UpstreamBodyClipped > 0 {
		return nil, false
	}
	body = s.tr.Comparable(r.UpstreamBody, r.UpstreamContentEncoding)
	if body == nil {
		return nil, false
	}
	return body, s.cl.Classify(outcome.Answer{Status: r.UpstreamStatus, Body: body}) == outcome.Success
}

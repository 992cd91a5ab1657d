package scenarios

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/idemproof/idemproof/outcome"
)

// maxResponseBody bounds what the runner reads of one response.
const maxResponseBody = 4 << 20

// newAttemptClient returns the runner's HTTP client. Every attempt gets a fresh
// connection: Go's transport may silently resend a request carrying an Idempotency-Key on
// a broken keep-alive connection, and a hidden attempt would corrupt every count the
// checkers make. Compression is off so bodies are compared byte for byte as sent.
func newAttemptClient() *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			Proxy:              nil,
			DialContext:        (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
			DisableKeepAlives:  true,
			DisableCompression: true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// send performs one attempt and returns its completion event: ok for a complete 2xx,
// fail for a complete 4xx, info for anything whose outcome the client cannot know (5xx,
// reset, closed, truncated, timed out).
func send(ctx context.Context, c *http.Client, req *http.Request, timeout time.Duration, keep []string, cl outcome.Classifier) Op {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := c.Do(req.WithContext(ctx))
	if err != nil {
		return Op{Type: OpInfo, Error: transportError(ctx, err), Class: outcome.Info}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody))
	op := Op{Status: resp.StatusCode, Body: body, Headers: pickHeaders(resp.Header, keep)}
	if err == nil {
		op.Class = cl.Classify(outcome.Answer{Status: resp.StatusCode, Header: resp.Header, Body: body})
	}
	switch {
	case err != nil:
		op.Type, op.Error, op.Class = OpInfo, "truncated: "+transportError(ctx, err), outcome.Info
	case is2xx(resp.StatusCode):
		op.Type = OpOK
	case is4xx(resp.StatusCode):
		op.Type = OpFail
	default:
		op.Type = OpInfo
	}
	return op
}

// transportError names what happened in the words of the proxy's client results.
func transportError(ctx context.Context, err error) string {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		return "timed-out"
	case errors.Is(err, syscall.ECONNRESET):
		return "reset"
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return "closed"
	}
	return err.Error()
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

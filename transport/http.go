package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/idemproof/idemproof/internal/bodytext"
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/transport/contentcoding"
	"github.com/tidwall/gjson"
)

// HTTP is the plain HTTP transport: one request per attempt, the body as the profile
// writes it, the ledger read with a GET.
type HTTP struct {
	Client     *http.Client       // attempts; nil: NewAttemptClient(nil)
	Probe      *http.Client       // ledger reads; nil: NewProbeClient(10 s, nil)
	Classifier outcome.Classifier // nil: outcome.Statuses{}
}

// Frame implements Transport: the body is sent as it is.
func (h *HTTP) Frame(_ string, body []byte) ([]byte, error) { return body, nil }

// Comparable implements Transport: the body with its content coding undone, as Do
// reads an answer.
func (h *HTTP) Comparable(body []byte, contentEncoding string) []byte {
	decoded, err := contentcoding.Decode(contentEncoding, body, MaxResponseBody)
	if err != nil {
		return nil
	}
	return decoded
}

// Open implements Transport; plain HTTP has nothing to share between attempts.
func (h *HTTP) Open() Sender { return httpSender{h} }

type httpSender struct{ h *HTTP }

func (s httpSender) Send(ctx context.Context, req *Request, timeout time.Duration) (Answer, error) {
	hreq, err := http.NewRequest(req.Method, req.URL, bytes.NewReader(req.Body))
	if err != nil {
		return Answer{}, fmt.Errorf("build request: %w", err)
	}
	hreq.Header = req.Header.Clone()
	return Do(ctx, s.h.client(), hreq, timeout, s.h.classifier(), nil), nil
}

func (httpSender) Close() {}

func (h *HTTP) client() *http.Client {
	if h.Client == nil {
		h.Client = NewAttemptClient(nil)
	}
	return h.Client
}

func (h *HTTP) classifier() outcome.Classifier {
	if h.Classifier == nil {
		return outcome.Statuses{}
	}
	return h.Classifier
}

// Do performs one HTTP attempt and classifies its complete answer. read, when set,
// turns the response into the comparable body instead of reading it whole (MCP reads
// its JSON-RPC response out of an event stream); an error from it makes the answer Info.
func Do(ctx context.Context, c *http.Client, req *http.Request, timeout time.Duration, cl outcome.Classifier,
	read func(resp *http.Response) ([]byte, error)) Answer {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := c.Do(req.WithContext(ctx))
	if err != nil {
		return Answer{Class: outcome.Info, Err: ErrorName(ctx, err)}
	}
	defer resp.Body.Close()
	// A compressed answer is compared by what it says (package contentcoding): the same
	// stored response gzipped twice is two byte strings.
	decoded, err := contentcoding.NewReader(resp.Header.Get("Content-Encoding"), resp.Body)
	if err != nil {
		return Answer{Status: resp.StatusCode, Header: resp.Header, Class: outcome.Info, Err: "undecodable: " + err.Error()}
	}
	if read == nil {
		read = readWhole
	}
	body, err := read(&http.Response{StatusCode: resp.StatusCode, Header: resp.Header, Body: io.NopCloser(decoded)})
	a := Answer{Status: resp.StatusCode, Header: resp.Header, Body: body}
	switch {
	case errors.Is(err, errTooLarge):
		a.Class, a.Err = outcome.Info, err.Error()
		return a
	case err != nil && contentcoding.IsDecodeError(err):
		a.Class, a.Err = outcome.Info, "undecodable: "+err.Error()
		return a
	case err != nil:
		a.Class, a.Err = outcome.Info, "truncated: "+ErrorName(ctx, err)
		return a
	}
	a.Class = cl.Classify(outcome.Answer{Status: resp.StatusCode, Header: resp.Header, Body: body})
	return a
}

// errTooLarge: an answer longer than MaxResponseBody is not read whole, so it is never
// compared as if it were.
var errTooLarge = fmt.Errorf("too large: over %d bytes, more than idemproof reads of one answer", MaxResponseBody)

// readWhole reads a whole body, at most MaxResponseBody bytes of it.
func readWhole(resp *http.Response) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBody+1))
	if err == nil && len(body) > MaxResponseBody {
		return body[:MaxResponseBody], errTooLarge
	}
	return body, err
}

// Count implements Transport: a GET of the ledger and the count at its path.
func (h *HTTP) Count(ctx context.Context, l Ledger) (int, error) {
	method := l.Method
	if method == "" {
		method = http.MethodGet
	}
	var reqBody io.Reader
	if l.Body != nil {
		reqBody = bytes.NewReader(l.Body)
	}
	req, err := http.NewRequestWithContext(ctx, method, l.URL, reqBody)
	if err != nil {
		return 0, fmt.Errorf("build ledger request: %w", err)
	}
	req.Header = l.Header.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	if l.Body != nil && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	probe := h.Probe
	if probe == nil {
		probe = NewProbeClient(10*time.Second, nil)
	}
	resp, err := probe.Do(req)
	if err != nil {
		return 0, fmt.Errorf("read ledger: %w", err)
	}
	defer resp.Body.Close()
	decoded, err := contentcoding.NewReader(resp.Header.Get("Content-Encoding"), resp.Body)
	if err != nil {
		return 0, fmt.Errorf("read ledger: %w", err)
	}
	body, err := io.ReadAll(io.LimitReader(decoded, MaxResponseBody))
	if err != nil {
		return 0, fmt.Errorf("read ledger: %w", err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		wait, hasWait := RetryAfter(resp.Header.Get("Retry-After"), time.Now())
		e := &LedgerStatusError{Method: method, URI: req.URL.RequestURI(), Status: resp.StatusCode,
			RetryAfter: wait, HasRetryAfter: hasWait, Body: clip(body)}
		if h.Classifier != nil {
			e.RateLimited = h.Classifier.Classify(outcome.Answer{Status: resp.StatusCode, Header: resp.Header, Body: body}) == outcome.Throttled
		}
		return 0, e
	}
	return Count(body, l.Count)
}

// Count reads a count at a gjson path (github.com/tidwall/gjson syntax) of a JSON
// document: an integer, or the length of an array ("data.#", or "data" itself).
func Count(body []byte, path string) (int, error) {
	if !gjson.ValidBytes(body) {
		return 0, fmt.Errorf("ledger response is not JSON: %s", clip(body))
	}
	v := gjson.GetBytes(body, path)
	switch {
	case !v.Exists():
		return 0, fmt.Errorf("count %s: nothing at that path in the ledger response %s", path, clip(body))
	case v.IsArray():
		return len(v.Array()), nil
	case v.Type == gjson.Number && v.Num >= 0 && v.Num == float64(int(v.Num)):
		return int(v.Num), nil
	}
	return 0, fmt.Errorf("count %s: %s is not a count (a non-negative integer or an array)", path, v.Raw)
}

// clip renders a ledger body for an error: JSON as JSON text, never Go-quoted.
func clip(b []byte) string { return bodytext.Line(b, 120) }

package faultproxy

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
)

// NewTransport returns the tuned upstream transport: a large idle pool per host (the
// proxy talks to few hosts with many parallel clients), no transparent compression (the
// client's Accept-Encoding and the upstream's bytes pass through untouched), no proxy from
// the environment, HTTP/1.1 only.
func NewTransport(insecureSkipVerify bool) *http.Transport {
	return &http.Transport{
		Proxy: nil,
		DialContext: (&net.Dialer{
			Timeout:   10 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		MaxIdleConns:          0, // no global cap; the per-host cap below bounds it
		MaxIdleConnsPerHost:   DefaultMaxIdlePerHost,
		IdleConnTimeout:       DefaultUpstreamIdleTimeout,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		DisableCompression:    true,
		ForceAttemptHTTP2:     false,
		TLSClientConfig:       &tls.Config{InsecureSkipVerify: insecureSkipVerify},
		WriteBufferSize:       32 << 10,
		ReadBufferSize:        32 << 10,
	}
}

// hopHeaders are the hop-by-hop fields of RFC 9110 §7.6.1 (plus the obsolete ones
// proxies still meet); they describe one connection and are never forwarded.
var hopHeaders = []string{
	"Connection",
	"Proxy-Connection",
	"Keep-Alive",
	"Proxy-Authenticate",
	"Proxy-Authorization",
	"Te",
	"Trailer",
	"Transfer-Encoding",
	"Upgrade",
}

// removeHopHeaders deletes the hop-by-hop fields and those the Connection field names.
func removeHopHeaders(h http.Header) {
	for _, v := range h["Connection"] {
		for _, name := range strings.Split(v, ",") {
			if name = textproto.TrimString(name); name != "" {
				h.Del(name)
			}
		}
	}
	for _, name := range hopHeaders {
		delete(h, name)
	}
}

// copyHeader copies end-to-end fields; the value slices are shared (both maps are ours).
func copyHeader(dst, src http.Header) {
	for k, vv := range src {
		dst[k] = vv
	}
}

// noReplayBody is an empty request body the Transport cannot rewind: a request with a nil
// body (or http.NoBody) and an Idempotency-Key header counts as replayable for Go's
// Transport, which would then silently resend it on a broken keep-alive connection and
// hide an attempt from the journal. With this body and no GetBody it never does.
type noReplayBody struct{}

func (noReplayBody) Read([]byte) (int, error) { return 0, io.EOF }
func (noReplayBody) Close() error             { return nil }

// joinPath appends the request path to the upstream's base path.
func joinPath(base *url.URL, in *url.URL) *url.URL {
	u := *base
	u.Path = base.Path + in.Path
	if in.RawPath != "" {
		u.RawPath = base.Path + in.RawPath
	}
	u.RawQuery, u.ForceQuery = in.RawQuery, in.ForceQuery // "/x?" stays "/x?", as the client sent it
	return &u
}

// sendResult is one upstream call: the response or the error, and whether the request
// reached the upstream (its headers were written: a failed call may still have acted).
type sendResult struct {
	resp  *http.Response
	err   error
	wrote atomic.Bool // set by the trace, which may fire on another goroutine
	start time.Time
}

// send makes one upstream call with body (nil = none) of the given length (-1 unknown).
func (ex *Exchange) send(ctx context.Context, target *url.URL, body io.Reader, length int64) *sendResult {
	res := &sendResult{start: time.Now()}
	out := &http.Request{
		Method:        ex.r.Method,
		URL:           joinPath(target, ex.r.URL),
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        ex.outHeader,
		Host:          target.Host,
		ContentLength: length,
		Close:         ex.retireUpstream,
	}
	if _, ok := ex.outHeader["User-Agent"]; !ok {
		// Request.Write would add Go's own; the upstream sees what the client sent.
		ex.outHeader["User-Agent"] = []string{""}
	}
	if body != nil {
		out.Body = io.NopCloser(body)
	}
	if pool, ok := ex.direct(target, body); ok {
		// The direct client never resends, so an empty body can stay nil: Request.Write
		// then sends "Content-Length: 0" on POST, PUT and PATCH, keyed or not.
		ex.sendDirect(ctx, pool, out, res)
		return res
	}
	if body == nil && (ex.rec.HasKey || ex.outHeader.Get("Idempotency-Key") != "" || ex.outHeader.Get("X-Idempotency-Key") != "") {
		out.Body, out.ContentLength = noReplayBody{}, 0
	}
	// Once the request headers are on the wire the upstream may act on the request even if
	// the body then fails, so that is when the call counts as having reached it.
	trace := &httptrace.ClientTrace{WroteHeaders: func() { res.wrote.Store(true) }}
	out = out.WithContext(httptrace.WithClientTrace(ctx, trace))
	res.resp, res.err = ex.p.transport.RoundTrip(out)
	if res.err == nil {
		res.wrote.Store(true)
	}
	return res
}

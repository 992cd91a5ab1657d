package faultproxy

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Defaults applied by New to zero Config fields.
const (
	DefaultKeyHeader        = "Idempotency-Key"
	DefaultJournalCapacity  = 10000
	DefaultBufferLimit      = 10 << 20 // 10 MiB
	DefaultJournalBodyLimit = 64 << 10 // 64 KiB of buffered upstream body kept per record
	DefaultMaxIdlePerHost   = 1024

	DefaultJournalBytes       = 64 << 20 // 64 MiB of records
	DefaultJournalHeaderLimit = 16 << 10 // 16 KiB of request headers kept per record
	DefaultAttemptKeyBytes    = 16 << 20 // 16 MiB of attempt counters

	DefaultReadHeaderTimeout = 30 * time.Second
	DefaultBodyTimeout       = 60 * time.Second
	DefaultIdleTimeout       = 2 * time.Minute
	DefaultStreamWait        = 10 * time.Second
	// DefaultUpstreamIdleTimeout is how long an unused upstream connection stays pooled.
	DefaultUpstreamIdleTimeout = 90 * time.Second

	// MaxJournalCapacity bounds Config.JournalCapacity (records).
	MaxJournalCapacity = 10_000_000
	// MaxBufferLimit bounds Config.BufferLimit.
	MaxBufferLimit = 1 << 30
	// maxPathRecorded is the longest request path (with query) a record keeps.
	maxPathRecorded = 8 << 10
)

// DefaultRedactedHeaders are request headers the journal records as "[redacted]":
// credentials never enter it — the standard ones, and the API keys and session tokens of
// the common cloud APIs (AWS's X-Amz-Security-Token, Google's X-Goog-Api-Key, GitLab's
// Private-Token). Config.Redact adds more.
var DefaultRedactedHeaders = []string{
	"Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie", "X-Api-Key", "Api-Key", "X-Auth-Token",
	"X-Amz-Security-Token", "X-Goog-Api-Key", "Private-Token",
}

// Config configures a Proxy. Zero values mean the documented default.
type Config struct {
	// Upstream is the http:// or https:// base URL requests are forwarded to; its path is
	// a prefix of every forwarded path. Ignored when Upstreams is set.
	Upstream string
	// Upstreams spreads requests round-robin over several replicas; a duplicate delivery
	// then sends its two copies to two different replicas, as a retrying load balancer does.
	Upstreams []string
	// KeyHeader names the idempotency key header (default Idempotency-Key).
	KeyHeader string
	// KeyField, when set, is a dotted path into a JSON request body
	// ("params.arguments.idempotency_key"; numeric segments index arrays) that carries the
	// key instead of the header. The request body is then buffered up to BufferLimit and
	// read as docs/faultproxy.md says: a body nested past MaxJSONDepth, or naming a member
	// of the path twice or in two letter cases, is refused (400); invalid JSON and a
	// JSON-RPC batch carry no key.
	KeyField string
	// Seed seeds the one random source behind rule probabilities.
	Seed int64
	// JournalCapacity bounds the journal (default 10000 records, at most
	// MaxJournalCapacity); older records are dropped and counted.
	JournalCapacity int
	// JournalBytes bounds the memory the journal's records take (default 64 MiB, at
	// least 64 KiB); the oldest records are dropped and counted to stay within it.
	JournalBytes int64
	// JournalHeaderLimit bounds the request header bytes a record keeps (default 16
	// KiB); values past it are clipped and Record.HeadersClipped says by how much.
	JournalHeaderLimit int
	// AttemptKeyBytes bounds the memory of the per-key attempt counters (default 16
	// MiB); the least recently used keys are forgotten (JournalStats.ForgottenKeys) and
	// their next attempt counts as attempt 1 again.
	AttemptKeyBytes int64
	// Redact names request headers recorded as "[redacted]" besides
	// DefaultRedactedHeaders.
	Redact []string
	// BufferLimit bounds what the proxy buffers of one body (default 10 MiB).
	BufferLimit int64
	// JournalBodyLimit bounds the buffered upstream body kept in a Record (default 64 KiB).
	JournalBodyLimit int
	// StreamWait bounds how long a fault that needs the upstream's whole answer (after-*)
	// waits on an event stream for the JSON-RPC response to its request, or for the
	// stream's end, counted from the stream's headers (default 10s; negative: no bound).
	// Past it the upstream call is ended and the fault applies to the events that arrived;
	// the record's note says so.
	StreamWait time.Duration
	// InsecureSkipVerify accepts any upstream TLS certificate (self-signed test servers).
	InsecureSkipVerify bool
	// TLSClientConfig, when set, verifies an https upstream (RootCAs with a test CA);
	// the tuned transport uses a clone of it, InsecureSkipVerify still applying. nil: the
	// system's roots. Ignored when Transport is set.
	TLSClientConfig *tls.Config
	// Classify, when set, names the outcome class of the complete answer each client got
	// (its status, header and body; for an event stream, the JSON-RPC response inside
	// it), journaled as Record.Class. nil: Record.Class stays empty. It runs once per
	// attempt, after the client was answered, and must be safe for concurrent use.
	Classify func(status int, header http.Header, body []byte) string
	// Rules are added in order at start; a bad one makes New fail with a *RuleError.
	Rules []Rule
	// Faults is the fault registry; nil means DefaultFaults().
	Faults Registry
	// Transport replaces the tuned upstream transport (tests, custom TLS); nil means
	// NewTransport(InsecureSkipVerify) with TLSClientConfig. It must not replay requests
	// on its own.
	Transport http.RoundTripper

	// ReadHeaderTimeout, BodyTimeout and IdleTimeout bound the client side of Start's
	// listeners (proxy and admin): the request headers, the request body (a client that
	// stalls mid-body gets 408, and the journal says so), and an idle keep-alive
	// connection. Defaults 30s, 60s, 2m; negative means none.
	ReadHeaderTimeout time.Duration
	BodyTimeout       time.Duration
	IdleTimeout       time.Duration
	// UpstreamIdleTimeout is how long an unused upstream connection stays pooled (default
	// 90s; it must be positive). Idle connections are closed in the background once it
	// passed, the least recently used first.
	UpstreamIdleTimeout time.Duration

	// ListenAddr and AdminAddr are where Start listens (default 127.0.0.1:0 each);
	// AdminToken, when set, is the bearer token the admin API requires.
	ListenAddr string
	AdminAddr  string
	AdminToken string
	// AdminAllowHosts are host names the admin API answers to besides loopback names, IP
	// literals and the host of AdminAddr (a container's network alias, say); "*" allows
	// any. Other Host values get 403, which keeps DNS-rebinding pages out.
	AdminAllowHosts []string
}

func (c Config) withDefaults() Config {
	if c.KeyHeader == "" {
		c.KeyHeader = DefaultKeyHeader
	}
	c.KeyHeader = http.CanonicalHeaderKey(c.KeyHeader)
	if c.JournalCapacity == 0 {
		c.JournalCapacity = DefaultJournalCapacity
	}
	if c.BufferLimit == 0 {
		c.BufferLimit = DefaultBufferLimit
	}
	if c.JournalBodyLimit == 0 {
		c.JournalBodyLimit = DefaultJournalBodyLimit
	}
	if c.JournalBytes == 0 {
		c.JournalBytes = DefaultJournalBytes
	}
	if c.JournalHeaderLimit == 0 {
		c.JournalHeaderLimit = DefaultJournalHeaderLimit
	}
	if c.AttemptKeyBytes == 0 {
		c.AttemptKeyBytes = DefaultAttemptKeyBytes
	}
	c.ReadHeaderTimeout = durationDefault(c.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	c.BodyTimeout = durationDefault(c.BodyTimeout, DefaultBodyTimeout)
	c.IdleTimeout = durationDefault(c.IdleTimeout, DefaultIdleTimeout)
	c.StreamWait = durationDefault(c.StreamWait, DefaultStreamWait)
	if c.UpstreamIdleTimeout == 0 {
		c.UpstreamIdleTimeout = DefaultUpstreamIdleTimeout
	}
	if c.Faults == nil {
		c.Faults = DefaultFaults()
	}
	if c.ListenAddr == "" {
		c.ListenAddr = "127.0.0.1:0"
	}
	if c.AdminAddr == "" {
		c.AdminAddr = "127.0.0.1:0"
	}
	return c
}

// upstreamURLs parses and checks the configured upstream(s).
func (c Config) upstreamURLs() ([]*url.URL, error) {
	raw := c.Upstreams
	if len(raw) == 0 {
		if c.Upstream == "" {
			return nil, fmt.Errorf("no upstream: set Upstream (or Upstreams) to an http:// or https:// URL")
		}
		raw = []string{c.Upstream}
	}
	out := make([]*url.URL, 0, len(raw))
	for _, s := range raw {
		u, err := url.Parse(s)
		if err != nil {
			return nil, fmt.Errorf("upstream %q: %w", s, err)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			return nil, fmt.Errorf("upstream %q: scheme must be http or https", s)
		}
		if u.Host == "" {
			return nil, fmt.Errorf("upstream %q: missing host (want e.g. http://127.0.0.1:8080)", s)
		}
		if u.RawQuery != "" || u.Fragment != "" {
			return nil, fmt.Errorf("upstream %q: must not carry a query or fragment", s)
		}
		u.Path = strings.TrimSuffix(u.Path, "/")
		u.RawPath = ""
		out = append(out, u)
	}
	return out, nil
}

// durationDefault: 0 takes the default, a negative duration means none (0 for net/http).
func durationDefault(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return -1
	}
	return d
}

func (c Config) check() error {
	if c.JournalCapacity < 1 || c.JournalCapacity > MaxJournalCapacity {
		return fmt.Errorf("journal capacity must be 1 to %d records, got %d", MaxJournalCapacity, c.JournalCapacity)
	}
	if c.JournalBytes < 64<<10 {
		return fmt.Errorf("journal bytes must be at least 65536 (64 KiB), got %d", c.JournalBytes)
	}
	if c.BufferLimit < 1 || c.BufferLimit > MaxBufferLimit {
		return fmt.Errorf("buffer limit must be 1 to %d bytes, got %d", MaxBufferLimit, c.BufferLimit)
	}
	if c.JournalBodyLimit < 0 || c.JournalBodyLimit > 16<<20 {
		return fmt.Errorf("journal body limit must be 0 to %d bytes, got %d", 16<<20, c.JournalBodyLimit)
	}
	if c.JournalHeaderLimit < 0 || c.JournalHeaderLimit > 1<<20 {
		return fmt.Errorf("journal header limit must be 0 to %d bytes, got %d", 1<<20, c.JournalHeaderLimit)
	}
	if c.AttemptKeyBytes < 64<<10 {
		return fmt.Errorf("attempt key bytes must be at least 65536 (64 KiB), got %d", c.AttemptKeyBytes)
	}
	for _, h := range c.Redact {
		if !isToken(h) {
			return fmt.Errorf("redact: %q must be a header name", h)
		}
	}
	if c.UpstreamIdleTimeout < 0 {
		return fmt.Errorf("upstream idle timeout must be positive, got %v", c.UpstreamIdleTimeout)
	}
	if strings.HasPrefix(c.KeyField, ".") || strings.HasSuffix(c.KeyField, ".") || strings.Contains(c.KeyField, "..") {
		return fmt.Errorf("key field %q: want a dotted path such as params.arguments.idempotency_key", c.KeyField)
	}
	return nil
}

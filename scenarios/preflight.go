package scenarios

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/idemproof/idemproof/internal/bodytext"
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/transport"
	"github.com/idemproof/idemproof/transport/mcp"
	"github.com/idemproof/idemproof/verdict"
)

// PreflightError is a target that is not what its profile says, found before any
// scenario ran. Field is the profile field to fix first ("base_url",
// "side_effects.count", …), or "" when no field would help and the target itself must
// change; the message names it too, with what came back.
type PreflightError struct {
	Target string
	Field  string
	Msg    string
}

func (e *PreflightError) Error() string {
	return fmt.Sprintf("preflight target %s: %s", e.Target, e.Msg)
}

// Preflight checks, in a few requests, that the profile describes its target: the ledger
// is read, the operation is sent once with a fresh key and entity (built exactly as the
// runner builds a scenario's request: key_header or key_field, headers, the first
// principal), and the ledger is read again. It returns a *PreflightError naming the
// field to fix when the target is unreachable or does not answer within client_timeout,
// when the answer is not what the profile's classifier calls success, when the ledger
// does not resolve to a number, or when the count did not grow by exactly one. The count
// is compared as a difference, so a ledger that counts every effect of the target (no
// {{.Entity}} in its path) is checked the same way, provided nothing else writes to it
// meanwhile.
//
// Without it, a misdescribed target yields an UNKNOWN per scenario: a run that proved
// nothing and looked like one that ran. Each request is bounded by client_timeout.
func Preflight(ctx context.Context, p *profile.Profile) error {
	_, err := PreflightNotes(ctx, p)
	return err
}

// PreflightNotes is Preflight, with what it noticed that does not stop the run: an
// operation that answered, but took more than half of client_timeout (a target that slow
// is sometimes slower, and its attempts then time out: UNKNOWN where a longer
// client_timeout would have judged).
func PreflightNotes(ctx context.Context, p *profile.Profile) ([]string, error) {
	res, err := PreflightTarget(ctx, p)
	return res.Notes, err
}

// runPreflight is one Preflight; nil when it could not start (an invalid profile) or was
// stopped from outside.
func runPreflight(ctx context.Context, p *profile.Profile) (*preflight, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("preflight: profile %s: %w", p.Name, err)
	}
	tc, err := p.TLSClientConfig()
	if err != nil {
		// Validate read the file a moment ago; it has gone since.
		return nil, fmt.Errorf("preflight: profile %s: %w", p.Name, err)
	}
	ctx, cancel := context.WithTimeout(ctx, preflightTimeout(p))
	defer cancel()
	pf := newPreflight(p, tc)
	defer pf.closeStdio()
	err = pf.stdioSession(ctx)
	if err == nil {
		err = pf.runThroughStore(ctx)
	}
	if err != nil && ctx.Err() != nil && context.Cause(ctx) != context.DeadlineExceeded {
		// Stopped from outside (an interrupt): not a fault of the profile.
		return nil, fmt.Errorf("preflight target %s: %w", p.Name, context.Cause(ctx))
	}
	return pf, err
}

// preflight is one Preflight: a target with no fault proxy (the operation goes straight
// to the target, or to the proxy the profile declares, as the runner's would), whose
// ledger probe keeps a clip of the last answer for the error messages.
type preflight struct {
	t      *target
	ledger *lastAnswer
	entity string
	key    string
	notes  []string
	pace   Pace // how fast the target answered (pace.go)
}

func newPreflight(p *profile.Profile, tc *tls.Config) *preflight {
	ledger := &lastAnswer{}
	t := &target{
		p:          p,
		client:     transport.NewAttemptClient(tc),
		probe:      &http.Client{Timeout: p.ClientTimeout.Std(), Transport: &clipTransport{base: transport.NewAttemptClient(tc).Transport, last: ledger}},
		classifier: p.Classifier(),
		proxyURL:   p.BaseURL,
		tls:        tc,
	}
	t.tr = p.NewTransport(t.classifier, t.probe, tc)
	if p.Proxy != nil && p.Proxy.URL != "" {
		t.proxyURL = p.Proxy.URL
	}
	// The key is minted as a scenario's (expect.key_format): a target that refuses the
	// runner's keys is found here, not as a catalogue of refused requests.
	nonce := newUUID()[:8]
	key := mintKeys(nonce, 0, p.MaxKeyLen(), p.UUIDKeys()).main
	return &preflight{t: t, ledger: ledger, entity: "ip-preflight-" + nonce, key: key}
}

func (pf *preflight) fail(field, format string, args ...any) error {
	return &PreflightError{Target: pf.t.p.Name, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// preflightLedgerLag is how long the preflight keeps reading a ledger that does not show
// the one operation it sent yet.
const preflightLedgerLag = 5 * time.Second

func (pf *preflight) run(ctx context.Context) error {
	p := pf.t.p
	entity, err := pf.t.createEntity(ctx, pf.entity)
	if err != nil {
		return pf.fail("entity_setup", "%v", err)
	}
	pf.entity = entity
	before, err := pf.count(ctx, "side_effects", p.SideEffects, "")
	if err != nil {
		return err
	}
	if p.Other != nil {
		if _, err := pf.count(ctx, "other_operation.side_effects", p.Other.SideEffects, ""); err != nil {
			return err
		}
	}
	page, err := pf.send(ctx)
	if err != nil {
		return err
	}
	after, err := pf.count(ctx, "side_effects", p.SideEffects, page)
	if err != nil {
		return err
	}
	// A ledger that lags its writes (a read replica, work applied after its answer)
	// shows the effect a little later: read again for a while before calling it wrong.
	lagged := time.Duration(0)
	for after == before && lagged < preflightLedgerLag && ctx.Err() == nil {
		const step = 250 * time.Millisecond
		transport.Sleep(ctx, step)
		lagged += step
		if after, err = pf.count(ctx, "side_effects", p.SideEffects, page); err != nil {
			return err
		}
	}
	if d := after - before; d != 1 {
		hint := "the path's {{.Entity}} is the entity operation.path/body carry"
		if d == 0 {
			hint += fmt.Sprintf("; read again for %s, it still showed no effect", preflightLedgerLag)
		}
		if d > 1 {
			hint = "a ledger that counts every effect of the target must not be written by anything else during the run"
		}
		what := p.Operation.Method + " " + p.Operation.Path
		if p.IsStdio() {
			what, hint = "tools/call "+p.Operation.Tool, "the arguments' {{.Entity}} is the entity operation.body carries"
		}
		return pf.fail("side_effects", "one successful %s changed the ledger by %d (before %d, after %d), not 1: side_effects must count this operation's effects, once (fix side_effects.path, side_effects.count; %s)%s",
			what, d, before, after, hint, pf.ledgerClip("now answers"))
	}
	return nil
}

// send sends the operation once. It returns a note for later ledger errors when the
// answer was a web page rather than an API's answer.
func (pf *preflight) send(ctx context.Context) (string, error) {
	p := pf.t.p
	field := "base_url"
	if p.Proxy != nil && p.Proxy.URL != "" {
		field = "proxy.url"
	}
	if p.IsStdio() {
		field = "mcp.command"
	}
	spec, err := pf.t.stepRequest(pf.t.proxyURL, pf.entity, scenarioKeys{main: pf.key}, Step{Name: "preflight"}, false)
	if err != nil {
		return "", pf.fail("operation", "build the operation: %v: fix operation", err)
	}
	// Through the profile's transport, as a scenario's attempt goes (over MCP: a session
	// opened first, closed after).
	timeout := p.ClientTimeout.Std()
	snd := pf.t.tr.Open()
	defer snd.Close()
	sent := time.Now()
	op, err := pf.t.sendAttempt(ctx, snd, spec.request(p), timeout)
	// A rate limit's refusal looked at nothing: the same request again, once it allows.
	for tries := 1; err == nil && op.Class == outcome.Throttled && tries < 3 && ctx.Err() == nil; tries++ {
		if !transport.Sleep(ctx, transport.ThrottleWait(transport.RetryAfter(op.Headers["Retry-After"], time.Now()))) {
			break
		}
		sent = time.Now()
		op, err = pf.t.sendAttempt(ctx, snd, spec.request(p), timeout)
	}
	if err == nil && op.Class.Determinate() {
		pf.pace.observeOperation(time.Since(sent))
	}
	if err == nil && !p.UUIDKeys() && refusedOutright(op) {
		// Refused with a free-form key: if a UUID key is accepted, the key's shape is
		// what the target refused (a middleware that parses the key as a UUID, or
		// accepts only 36 characters), and key_format is the fix. A refusal that is a
		// server error does not stop the run: a 5xx for a valid key is a fault of the
		// target's that key/valid-never-5xx exists to judge (gofiber's default
		// KeyHeaderValidate, the reference's strict-key-shape flaw); the note names the
		// field that checks the rest of the contract.
		if uuidOp, uerr := pf.sendWithKey(ctx, snd, newUUID()); uerr == nil && uuidOp.Class == outcome.Success {
			what := spec.method + " " + spec.url
			if op.Class != outcome.ServerError {
				return "", pf.fail("expect.key_format", "%s answered %d%s to the key %s, which the profile's rules call %s, but accepted a UUID key (%d): the target accepts only UUID keys; set expect.key_format: uuid (every key is then a UUID, and the scenarios whose premise is another key shape are N/A)",
					what, op.Status, answerClip(op.Headers["Content-Type"], op.Body), pf.key, op.Class, uuidOp.Status)
			}
			pf.notes = append(pf.notes, fmt.Sprintf("%s answered %d%s to the key %s, but accepted a UUID key (%d): a key of another shape than a UUID gets a server error, which key/valid-never-5xx judges, and so does every key the scenarios send; if the target accepts only UUID keys, set expect.key_format: uuid to check the rest of the contract with UUID keys",
				what, op.Status, answerClip(op.Headers["Content-Type"], op.Body), pf.key, uuidOp.Status))
			op = uuidOp // the operation that executed, for the ledger check
		}
	}
	if errors.Is(err, mcp.ErrNoIdempotencyCapability) {
		return "", pf.fail("mcp.require_idempotency_capability", "%v: the server must advertise it in its initialize answer; a server that honours keys without advertising it is checked without the field (or without extends: mcp-sep-3182, which sets it)", err)
	}
	if err != nil {
		return "", pf.fail(field, "could not send the operation: %v: fix %s (and mcp:, operation.path)", err, field)
	}
	what := spec.method + " " + spec.url
	if p.IsStdio() {
		what = "tools/call " + p.Operation.Tool
	}
	if took := time.Since(sent); op.Class == outcome.Success && took > timeout/2 {
		pf.notes = append(pf.notes, fmt.Sprintf("%s took %s of client_timeout (%s): attempts of a target this slow time out whenever it is slower still, and are then UNKNOWN; raise client_timeout",
			what, took.Round(time.Millisecond), timeout))
	}
	switch {
	case op.Status == 0 && op.Error == transport.TimedOut:
		return "", pf.fail(field, "%s did not answer within client_timeout (%v): fix %s (and operation.path), or raise client_timeout if the target is that slow", what, timeout, field)
	case op.Status == 0:
		return "", pf.fail(field, "%s %s is not reachable (%s: %s): start the target or fix %s", field, pf.t.proxyURL, what, op.Error, field)
	case op.Class == outcome.Info && strings.Contains(op.Error, "stream cut: "):
		// An MCP server answered with an event stream, so base_url is right: the stream
		// ended before the response, and either had no event id to resume from or the
		// resumption was refused. The server is what to fix.
		return "", pf.fail("", "%s answered %d with an event stream that ended before the tool's response (%s): the server must send the response on that stream, or, if it closes the stream for the client to poll (MCP 2025-11-25, \"Resumability and Redelivery\"), send an event id first and answer the GET with Last-Event-ID on the endpoint with the rest of the stream; no profile field changes this",
			what, op.Status, op.Error[strings.Index(op.Error, "stream cut: ")+len("stream cut: "):])
	case op.Class == outcome.Info:
		return "", pf.fail(field, "%s answered %d but the body was cut short (%s): fix %s", what, op.Status, op.Error, field)
	case op.Class == outcome.Throttled:
		return "", pf.fail(field, "%s was refused by a rate limit (%d%s) three times: give the harness's credentials a higher limit, or try again later", what, op.Status, answerClip(op.Headers["Content-Type"], op.Body))
	case (op.Class == outcome.MissingKey || op.Class == outcome.InvalidKey) && p.KeyField != "":
		// The key went out, so the target did not find it where the profile puts it.
		return "", pf.fail("key_field", "%s answered %d%s, which the profile's rules call %s: the target did not find the key at key_field %s; fix key_field (a dot inside a member's name is written \\.)",
			what, op.Status, answerClip(op.Headers["Content-Type"], op.Body), op.Class, p.KeyField)
	case op.Class == outcome.MissingKey || op.Class == outcome.InvalidKey:
		return "", pf.fail("key_header", "%s answered %d%s, which the profile's rules call %s: the target did not read the key from the %s header; fix key_header",
			what, op.Status, answerClip(op.Headers["Content-Type"], op.Body), op.Class, p.KeyHeader)
	case op.Class != outcome.Success:
		return "", pf.fail("operation", "%s answered %d%s, which the profile's rules call %s, not success: fix operation.path, operation.method, operation.body or operation.headers (or base_url, if it points elsewhere)",
			what, op.Status, answerClip(op.Headers["Content-Type"], op.Body), op.Class)
	}
	if f := p.Expect.UniqueField; f != "" {
		if _, ok := uniqueValue(p, op.Body); !ok {
			pf.notes = append(pf.notes, fmt.Sprintf("expect.unique_field %s names nothing in the operation's answer (%d%s): replays are told by their bytes and the ledger instead; fix the path if the answer carries a per-execution id",
				f, op.Status, answerClip(op.Headers["Content-Type"], op.Body)))
		}
	}
	if looksLikePage(op.Headers["Content-Type"], op.Body) {
		return fmt.Sprintf("; the operation's answer too was a web page (%d%s): check base_url and operation.path", op.Status, answerClip(op.Headers["Content-Type"], op.Body)), nil
	}
	return "", nil
}

// refusedOutright reports whether the target answered op with a refusal: an answer it
// meant, neither a success nor a rate limit nor one the client could not see.
func refusedOutright(op verdict.Op) bool {
	return op.Status != 0 && op.Class != outcome.Success && op.Class != outcome.Throttled && op.Class != outcome.Info
}

// sendWithKey sends the operation once more with key instead of the preflight's own.
func (pf *preflight) sendWithKey(ctx context.Context, snd transport.Sender, key string) (verdict.Op, error) {
	spec, err := pf.t.stepRequest(pf.t.proxyURL, pf.entity, scenarioKeys{main: key}, Step{Name: "preflight"}, false)
	if err != nil {
		return verdict.Op{}, err
	}
	return pf.t.sendAttempt(ctx, snd, spec.request(pf.t.p), pf.t.p.ClientTimeout.Std())
}

// count reads one ledger and turns its failure into the field to fix.
func (pf *preflight) count(ctx context.Context, field string, pr profile.Probe, note string) (int, error) {
	pf.ledger.reset()
	read := time.Now()
	n, err := pf.t.readLedger(ctx, pr, pf.entity)
	if err == nil {
		pf.pace.observeLedger(time.Since(read))
		return n, nil
	}
	if pf.t.p.IsStdio() {
		return 0, pf.stdioLedgerFailure(field, pr, err, note)
	}
	status, ctype, body, got := pf.ledger.get()
	path, rerr := profile.Render(pr.Path, pf.entity)
	if rerr != nil {
		return 0, pf.fail(field+".path", "render %s.path %q: %v", field, pr.Path, rerr)
	}
	url := pr.Method + " " + strings.TrimSuffix(pf.t.ledgerBase(), "/") + path
	if pr.Tool != "" {
		url = "tools/call " + pr.Tool + " at " + strings.TrimSuffix(pf.t.ledgerBase(), "/") + path
	}
	var netErr net.Error
	switch {
	case got && looksLikePage(ctype, body):
		return 0, pf.fail("base_url", "the ledger %s answered a web page, not an API's answer (%d%s): check that base_url points at the API, then %s.path and operation.path",
			url, status, answerClip(ctype, body), field)
	case !got && (errors.Is(err, context.DeadlineExceeded) || errors.As(err, &netErr) && netErr.Timeout()):
		return 0, pf.fail("base_url", "the ledger %s did not answer within client_timeout (%v): fix base_url or %s.path, or raise client_timeout", url, pf.t.p.ClientTimeout.Std(), field)
	case !got && isUntrustedCertificate(err):
		return 0, pf.untrusted(err)
	case !got && isResetAtOnce(err) && !strings.HasPrefix(pf.t.ledgerBase(), "https:"):
		return 0, pf.fail("base_url", "base_url %s accepted the connection and then reset it (reading the ledger: %s): is something else listening there, or a server that speaks only HTTP/2 without TLS (h2c)? idemproof speaks HTTP/1.1; start the target's HTTP/1.1 listener or fix base_url", pf.t.ledgerBase(), strings.TrimPrefix(err.Error(), "read ledger: "))
	case !got:
		return 0, pf.fail("base_url", "base_url %s is not reachable (reading the ledger: %s): start the target or fix base_url", pf.t.ledgerBase(), strings.TrimPrefix(err.Error(), "read ledger: "))
	case !is2xx(status) && pr.Tool != "":
		return 0, pf.fail("base_url", "the ledger %s answered %d%s: check that base_url and operation.path name the MCP endpoint (or set %s.path)%s", url, status, answerClip(ctype, body), field, note)
	case !is2xx(status):
		return 0, pf.fail(field+".path", "the ledger %s answered %d%s: fix %s.path (and %s.method, %s.headers)%s", url, status, answerClip(ctype, body), field, field, field, note)
	}
	why := strings.TrimPrefix(err.Error(), "read ledger: ")
	if pr.Tool != "" {
		// The last HTTP answer is the session's, not the tool's: the reason shows the
		// JSON-RPC response itself.
		return 0, pf.fail(field+".count", "the ledger %s does not resolve to a number (%s): fix %s.count (a JSON path into the JSON-RPC response, such as result.structuredContent.count) or %s.tool%s",
			url, why, field, field, note)
	}
	// The reason names the body the ledger answered; the message shows it once, first.
	line := bodytext.Line(body, answerClipBytes)
	why = strings.Replace(why, " in the ledger response "+line, "", 1)
	why = strings.Replace(why, "ledger response is not JSON: "+line, "the body is not JSON", 1)
	return 0, pf.fail(field+".count", "the ledger %s answered%s, which does not resolve to a number (%s): fix %s.count (a JSON path such as count or data.#) or %s.path%s",
		url, answerClip(ctype, body), why, field, field, note)
}

// ledgerClip is "; the ledger <verb> (type) "body…"" for the last ledger answer.
func (pf *preflight) ledgerClip(verb string) string {
	_, ctype, body, got := pf.ledger.get()
	if !got {
		return ""
	}
	return "; the ledger " + verb + answerClip(ctype, body)
}

// answerClip is " (text/html) <html><body>…": a short, printable rendering of a body,
// JSON as JSON text (internal/bodytext), other text with its white space collapsed.
func answerClip(ctype string, body []byte) string {
	out := ""
	if ctype != "" {
		out = " (" + ctype + ")"
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return out + " with an empty body"
	}
	if !json.Valid(body) {
		body = []byte(strings.Join(strings.Fields(string(body)), " "))
	}
	return out + " " + bodytext.Line(body, answerClipBytes)
}

// answerClipBytes bounds a body quoted in a preflight error.
const answerClipBytes = 120

func looksLikePage(ctype string, body []byte) bool {
	if strings.HasPrefix(strings.ToLower(ctype), "text/html") {
		return true
	}
	b := bytes.ToLower(bytes.TrimSpace(body))
	return bytes.HasPrefix(b, []byte("<!doctype html")) || bytes.HasPrefix(b, []byte("<html"))
}

// lastAnswer is the last ledger answer the probe saw, for the error messages.
type lastAnswer struct {
	mu     sync.Mutex
	got    bool
	status int
	ctype  string
	body   []byte
}

func (l *lastAnswer) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got, l.status, l.ctype, l.body = false, 0, "", nil
}

func (l *lastAnswer) get() (int, string, []byte, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.status, l.ctype, l.body, l.got
}

// clipTransport keeps each answer's status, type and body in last; the probe code reads
// the body as always. The ledger read is left as the runner does it (ledger.go): the
// preflight only watches it.
type clipTransport struct {
	base http.RoundTripper
	last *lastAnswer
}

func (c *clipTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, transport.MaxResponseBody))
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	c.last.mu.Lock()
	c.last.got, c.last.status, c.last.ctype, c.last.body = true, resp.StatusCode, resp.Header.Get("Content-Type"), body
	c.last.mu.Unlock()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, nil
}

// newUUID is a random (version 4) UUID. Hand-written: six lines, where a dependency
// would be a go.mod entry for one call.
func newUUID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // never fails (crypto/rand, Go 1.24+)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// preflightTimeout bounds a whole Preflight beyond the per-request client_timeout: at
// most five requests (a refused operation is sent once more with a UUID key), and one
// more second for the connections.
func preflightTimeout(p *profile.Profile) time.Duration {
	d := 5*p.ClientTimeout.Std() + time.Second + preflightLedgerLag + 2*transport.ThrottleMaxWait
	if p.IsStdio() {
		d += p.StartTimeout() // the server's start and initialize answer come first
	}
	return d
}

// untrusted names the fix for a TLS certificate the harness does not trust: tls.ca_file
// first, unless no CA would make it right (it names other hosts, it has expired).
func (pf *preflight) untrusted(err error) error {
	field := "base_url"
	if pf.t.p.BaseURL == "" {
		field = "proxy.url"
	}
	base, why := pf.t.ledgerBase(), strings.TrimPrefix(err.Error(), "read ledger: ")
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	switch {
	case errors.As(err, &host):
		return pf.fail(field, "%s %s answers, but its TLS certificate is for other names (%s): give %s a host name the certificate names", field, base, why, field)
	case errors.As(err, &invalid):
		return pf.fail(field, "%s %s answers, but its TLS certificate is not valid (%s), which no tls.ca_file changes: fix the target's certificate", field, base, why)
	case pf.t.p.TLS != nil && pf.t.p.TLS.CAFile != "":
		return pf.fail("tls.ca_file", "%s %s answers, but its TLS certificate is not trusted (%s): tls.ca_file %s does not hold the CA that signed it; fix tls.ca_file (the PEM file of that CA, or of one of its issuers)", field, base, why, pf.t.p.TLS.CAFile)
	}
	return pf.fail("tls.ca_file", "%s %s answers, but its TLS certificate is not trusted (%s): set tls.ca_file to the PEM file of the CA that signed it (a test CA; idemproof trusts the system's CA roots and tls.ca_file's), or put `idemproof proxy --insecure-upstream` in front and give its address as proxy.url", field, base, why)
}

// isUntrustedCertificate reports whether err is a TLS certificate the client does not
// trust (an unknown authority, another host's name, expired): the target is there.
func isUntrustedCertificate(err error) bool {
	var verify *tls.CertificateVerificationError
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	return errors.As(err, &verify) || errors.As(err, &unknown) || errors.As(err, &host) || errors.As(err, &invalid)
}

// isResetAtOnce reports whether err is a connection that was accepted and then reset or
// closed before any answer: not a target that is down (that refuses the connection).
func isResetAtOnce(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

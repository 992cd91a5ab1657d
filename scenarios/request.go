package scenarios

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/idemproof/idemproof/internal/jsonvalue"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/transport"
)

// scenarioKeys are the keys one scenario run uses, all minted from the run nonce.
type scenarioKeys struct {
	main, longest, tooLong, control string
	maxLen                          int  // the longest key the API accepts (Profile.maxKeyLen)
	uuid                            bool // expect.key_format: uuid: every key is a UUID
}

// mintKeys mints scenario n's keys. Free-form, the key is idemproof-<nonce>-NNN: a person
// reading a target's logs can tell a harness key and find its scenario. With uuid (a
// target that accepts only UUIDs), every key is keyUUID of the same parts instead.
func mintKeys(nonce string, n, maxLen int, uuid bool) scenarioKeys {
	main := fmt.Sprintf("idemproof-%s-%03d", nonce, n)
	pad := func(l int) string { return main + "-" + strings.Repeat("x", l-len(main)-1) }
	k := scenarioKeys{main: main, longest: pad(maxLen), tooLong: pad(maxLen + 1), control: main + "\tctl", maxLen: maxLen}
	if uuid {
		// Only the key forms a UUID can take are sent (the others' scenarios are N/A);
		// the long and control keys stay as they are, unused.
		k.main, k.uuid = keyUUID(main), true
	}
	return k
}

// derived is the key named label derived from the scenario's key (another key, key i of
// a set): main-label free-form, a UUID of both with key_format uuid.
func (k scenarioKeys) derived(label string) string {
	if k.uuid {
		return keyUUID(k.main + "/" + label)
	}
	return k.main + "-" + label
}

// keyUUID is the lower-case RFC 9562 UUID of name: the first 16 bytes of its SHA-256,
// with the version and variant bits of a version 4 UUID.
//
// Why derived and not random: the name holds the run nonce and the scenario number (and
// the set and index of a key set), so every step and retry that must repeat a key
// derives the same one, a key in the evidence is a function of what the report records,
// and minting draws nothing from the seeded source, so a run with --seed makes the same
// fault choices with either key format. Keys of different scenarios and runs never
// collide: the nonce is fresh per run, and 122 bits of hash leave no collision to meet.
//
// Why version 4 and not version 8 (the layout RFC 9562 gives application-defined bits):
// validators that accept only version 4 are common (a UUIDv4 check is many frameworks'
// "is a UUID"), and hash bits are as unpredictable as a random UUID's.
func keyUUID(name string) string {
	sum := sha256.Sum256([]byte("idemproof-key/" + name))
	b := sum[:16]
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 9562 variant
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// keyFor returns the key a step sends and whether it sends one at all.
func (k scenarioKeys) keyFor(f KeyForm) (string, bool) {
	switch f {
	case KeyNone:
		return "", false
	case KeyEmpty:
		return "", true
	case Key255:
		return k.longest, true
	case Key256:
		return k.tooLong, true
	case KeyControl:
		return k.control, true
	case KeyQuoted:
		return `"` + k.main + `"`, true
	}
	if key, ok := k.shaped(f); ok {
		return key, true
	}
	return k.main, true
}

// requestSpec is a step's request, built once and sent as every attempt of the step (a
// burst of 1,000 renders its templates once).
type requestSpec struct {
	method, url string
	header      http.Header
	body        []byte
	key         string // "" when the step sends no key
	principal   int
	session     string // the transport session's name: the principal's, or the step's own
}

// newRequest is the spec as one plain HTTP request (steps that choose their own client).
func (s requestSpec) newRequest() (*http.Request, error) {
	req, err := http.NewRequest(s.method, s.url, bytes.NewReader(s.body))
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	req.Header = s.header.Clone()
	return req, nil
}

// request is the spec as the transport takes it.
func (s requestSpec) request(p *profile.Profile) *transport.Request {
	return &transport.Request{URL: s.url, Method: s.method, Header: s.header, Body: s.body,
		Session: s.session, SessionHeader: p.SessionHeader(s.principal)}
}

// stepRequest builds the request of one step against base (the proxy).
func (t *target) stepRequest(base, entity string, keys scenarioKeys, st Step, marked bool) (requestSpec, error) {
	p := t.p
	op := p.Operation
	body := op.Body
	switch st.Payload {
	case PayloadAltered:
		body = op.AlteredBody
	case PayloadOther:
		op = p.Other.Operation
		body = op.Body
	case PayloadBusiness:
		body = p.Business.Body
	case PayloadValidation:
		body = p.Validation.Body
	case PayloadLedgerRead:
		op = profile.Operation{Method: p.SideEffects.Method, Path: p.SideEffects.Path, Headers: p.SideEffects.Headers}
		body = p.SideEffects.Body
	}
	path, err := profile.Render(op.Path, entity)
	if err != nil {
		return requestSpec{}, fmt.Errorf("render path: %w", err)
	}
	rendered, err := profile.Render(body, entity)
	if err != nil {
		return requestSpec{}, fmt.Errorf("render body: %w", err)
	}
	if st.ChangeMember > 0 {
		members := p.ChangeableMembers()
		if st.ChangeMember > len(members) {
			return requestSpec{}, fmt.Errorf("step %s: operation.body has %d changeable members", st.Name, len(members))
		}
		if rendered, err = changeMember(rendered, members[st.ChangeMember-1]); err != nil {
			return requestSpec{}, err
		}
	}
	framed, err := t.tr.Frame(op.Tool, []byte(rendered))
	if err != nil {
		return requestSpec{}, err
	}
	hook, hooked, err := t.stepHook(st.Hook, entity)
	if err != nil {
		return requestSpec{}, err
	}
	key, hasKey := keys.keyFor(st.Key)
	payload, isJSON, err := shapeBody(string(framed), p.KeyField, key, hasKey, hook.fields, st.Variant)
	if err != nil {
		return requestSpec{}, err
	}
	if hooked {
		path = hook.onPath(path)
	}
	if st.Variant == VariantQueryString {
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		path += sep + "idemproof=1"
	}
	req := requestSpec{method: op.Method, url: strings.TrimSuffix(base, "/") + path, header: http.Header{}, body: payload, principal: st.Principal,
		session: strconv.Itoa(st.Principal)}
	if st.NewSession {
		req.session += "/" + st.Name
	}
	if isJSON {
		req.header.Set("Content-Type", "application/json")
	}
	common, err := p.RequestHeaders(op.Headers, st.Principal, entity)
	if err != nil {
		return requestSpec{}, err
	}
	for k, v := range common {
		req.header[k] = v
	}
	if hooked && hook.header != "" {
		req.header.Set(hook.header, hook.value)
	}
	for _, h := range hook.extra {
		req.header.Set(h[0], h[1])
	}
	if marked {
		req.header.Set(StepHeader, st.Name)
	}
	if st.Variant == VariantUnrelatedHeader {
		req.header.Set("X-Idemproof-Unrelated", "variant")
	}
	if p.KeyHeader != "" && hasKey {
		name := http.CanonicalHeaderKey(p.KeyHeader)
		if st.Variant == VariantLowerCaseHeader {
			name = strings.ToLower(p.KeyHeader)
		}
		// Direct map assignment keeps the name's case on the wire and allows "".
		req.header[name] = []string{key}
	}
	if hasKey {
		req.key = key
	}
	return req, nil
}

// shapeBody puts the key into a JSON body (key_field), and the step's test hooks in the
// field form (path, value), and applies a variant. A JSON body is always sent in one
// canonical compact spelling, so a variant differs from the original in exactly the one
// way it names. Over MCP the body is the JSON-RPC request the transport framed, so the
// key and the hooks reach the server inside the tools/call, on every transport alike.
func shapeBody(rendered, keyField, key string, hasKey bool, hookFields []hookField, v Variant) ([]byte, bool, error) {
	doc, err := jsonvalue.Parse(rendered)
	if err != nil {
		switch {
		case keyField != "":
			return nil, false, fmt.Errorf("body is not JSON, cannot carry the key at %s: %w", keyField, err)
		case len(hookFields) > 0:
			return nil, false, fmt.Errorf("body is not JSON, cannot carry the test hook at %s: %w", hookFields[0].path, err)
		}
		return []byte(rendered), false, nil
	}
	if keyField != "" && hasKey {
		if err := doc.Set(keyField, jsonvalue.NewString(key)); err != nil {
			return nil, false, fmt.Errorf("key_field %w", err)
		}
	}
	for _, f := range hookFields {
		if err := doc.Set(f.path, f.value); err != nil {
			return nil, false, fmt.Errorf("test hook field %w", err)
		}
	}
	indent := ""
	switch v {
	case VariantKeyOrder:
		doc.ReverseKeys()
	case VariantWhitespace:
		indent = "  "
	case VariantNumberSpelling:
		doc.RespellPayloadIntegers()
	}
	var b bytes.Buffer
	doc.Encode(&b, indent, "")
	return b.Bytes(), true, nil
}

// attemptTimeout is how long the client waits for one attempt of the step: the profile's
// client timeout (the hold timeout in a hold scenario), plus any hold the step itself
// asks the target for.
func (t *target) attemptTimeout(h Hook, held bool) time.Duration {
	d := t.p.ClientTimeout.Std()
	if held {
		d = t.holdTimeout()
	}
	switch h {
	case HookSlow, HookSlowFail:
		d += t.slow()
	case HookSlowPastLock:
		d += t.pastLockHold()
	case HookSlowPastTimeout:
		// The client is meant to give up: its own timeout, which the scenario's plan may
		// have shortened to fit the declared retention.
		d = t.giveUpTimeout()
	case HookSlowPastTimeoutWaited:
		// The same hold, with a client that waits it out.
		d += t.giveUpHold()
	}
	return d
}

// giveUpTimeout is the client timeout of HookSlowPastTimeout's attempt: client_timeout,
// or the shorter one the scenario's plan fitted to the declared retention.
func (t *target) giveUpTimeout() time.Duration {
	if t.plan != nil && t.plan.giveUpTimeout > 0 {
		return t.plan.giveUpTimeout
	}
	return t.p.ClientTimeout.Std()
}

// giveUpHold is how long HookSlowPastTimeout holds the work (giveUpHoldFor).
func (t *target) giveUpHold() time.Duration { return giveUpHoldFor(t.giveUpTimeout()) }

// giveUpHoldFor is the hold past a client timeout c: past it by half of it (at least
// 300 ms), so the client has gone well before the work could end.
func giveUpHoldFor(c time.Duration) time.Duration { return c + max(c/2, 300*time.Millisecond) }

// pastHold is how long after a held step began the next one goes (WaitPastHold): the
// hold h and a quarter of it more (at least 300 ms).
func pastHold(h time.Duration) time.Duration { return h + max(h/4, 300*time.Millisecond) }

// workTime is the target's own time for an operation as its preflight measured it, where
// the scenario's plan waits it out (0: none).
func (t *target) workTime() time.Duration {
	if t.plan == nil {
		return 0
	}
	return t.plan.workTime
}

// pastLockHold is how long HookSlowPastLock holds the original: twice the lock timeout,
// or the shorter hold the scenario's plan fitted to the declared retention.
func (t *target) pastLockHold() time.Duration {
	if t.plan != nil && t.plan.pastLockHold > 0 {
		return t.plan.pastLockHold
	}
	return 2 * t.p.LockTimeout.Std()
}

func (t *target) slow() time.Duration {
	if t.p.Slow == nil {
		return 0
	}
	return t.p.Slow.HoldDuration()
}

// resolve fills a fault's duration from the profile.
func (t *target) resolve(ref DurationRef) time.Duration {
	switch ref {
	case PastClientTimeout:
		return t.holdTimeout() + 300*time.Millisecond
	case QuarterSlow:
		return max(t.slow()/4, 20*time.Millisecond)
	case QuarterClientTimeout:
		return t.p.ClientTimeout.Std() / 4
	}
	return 0
}

// holdTimeout is how long the client waits in a scenario whose response is held past it:
// the client timeout, but at most half the declared retention, so that the retry still
// falls inside the window and must be a replay (a retry after the window may legitimately
// execute again, which would make the scenario prove nothing).
func (t *target) holdTimeout() time.Duration {
	d := t.p.ClientTimeout.Std()
	if r := t.p.Retention.Std(); r > 0 && r/2 < d {
		d = r / 2
	}
	return d
}

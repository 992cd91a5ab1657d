package scenarios_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/verdict"
)

// classed fills in the class of every completion event the way the runner does: by the
// profile's classifier for a complete answer, info for one the client could not see.
func classed(rec verdict.Record, p *profile.Profile) verdict.Record {
	cl := p.Classifier()
	for i, op := range rec.History {
		switch {
		case op.Type == verdict.OpInvoke || op.Class != "":
		case op.Status == 0:
			rec.History[i].Class = outcome.Info
		default:
			rec.History[i].Class = cl.Classify(outcome.Answer{Status: op.Status, Body: op.Body})
		}
	}
	return rec
}

// keyed sets the key of the last attempt (its invoke and its completion).
func (h *history) keyed(key string) *history {
	h.ops[len(h.ops)-2].Key, h.ops[len(h.ops)-1].Key = key, key
	return h
}

func judgeWith(t *testing.T, id string, rec verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
	t.Helper()
	return checker(t, id)(classed(rec, p), p)
}

func TestDistinctKeysSameBody(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	two := func(second verdict.OpType, status int, body string, ledger int) verdict.Record {
		return newHistory().at(0, "first", verdict.OpOK, 201, `{"id":"re_1"}`, nil).at(5, "second", second, status, body, nil).
			at(10, scenarios.ControlStep, verdict.OpOK, 201, `{"id":"re_1"}`, nil).record(ledger)
	}
	v, msg, _ := judgeWith(t, "key/distinct-keys-same-body", two(verdict.OpOK, 201, `{"id":"re_2"}`, 2), p)
	require.Equal(t, verdict.Pass, v, msg)

	v, msg, ev := judgeWith(t, "key/distinct-keys-same-body", two(verdict.OpOK, 201, `{"id":"re_1"}`, 1), p)
	require.Equal(t, verdict.Fail, v)
	require.Contains(t, msg, "the second key was answered the first key's response")
	require.Equal(t, 1, ev.Categories["lost"])

	v, _, ev = judgeWith(t, "key/distinct-keys-same-body", two(verdict.OpOK, 201, `{"id":"re_2"}`, 3), p)
	require.Equal(t, verdict.Fail, v)
	require.Equal(t, 1, ev.Categories["duplicated"])

	v, msg, _ = judgeWith(t, "key/distinct-keys-same-body", two(verdict.OpFail, 422, `{}`, 1), p)
	require.Equal(t, verdict.Fail, v)
	require.Contains(t, msg, "a different key is a different operation")

	// A timed-out second attempt: the ledger decides when it can, never a FAIL by itself.
	v, msg, _ = judgeWith(t, "key/distinct-keys-same-body", two(verdict.OpInfo, 0, "", 2), p)
	require.Equal(t, verdict.Pass, v, msg)
	v, msg, _ = judgeWith(t, "key/distinct-keys-same-body", two(verdict.OpInfo, 0, "", 1), p)
	require.Equal(t, verdict.Unknown, v, msg)
}

var shapes = []string{"uuid", "ulid", "base64url", "one-char", "len-255"}

// shapeLength is how long each shape's key is.
var shapeLength = map[string]int{"uuid": 36, "ulid": 26, "base64url": 43, "one-char": 1, "len-255": 255}

func TestValidKeysNever5xx(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	build := func(ledger int, first func(shape string) (verdict.OpType, int, string)) verdict.Record {
		h := newHistory()
		for i, s := range shapes {
			typ, status, body := first(s)
			key := strings.Repeat("k", shapeLength[s])
			h.at(10*i, s, typ, status, body, nil).keyed(key)
			h.at(10*i+5, s+"-again", typ, status, body, nil).keyed(key)
		}
		return h.record(ledger)
	}
	ok := func(s string) (verdict.OpType, int, string) { return verdict.OpOK, 201, `{"id":"` + s + `"}` }
	v, msg, _ := judgeWith(t, "key/valid-never-5xx", build(5, ok), p)
	require.Equal(t, verdict.Pass, v, msg)

	// The one-character key may meet an earlier run's record: its success without an
	// effect of its own is allowed, no other key's is.
	v, msg, _ = judgeWith(t, "key/valid-never-5xx", build(4, ok), p)
	require.Equal(t, verdict.Pass, v, msg)
	v, msg, ev := judgeWith(t, "key/valid-never-5xx", build(3, ok), p)
	require.Equal(t, verdict.Fail, v, msg)
	require.Equal(t, 1, ev.Categories["lost"])

	notUUID := func(s string) (verdict.OpType, int, string) {
		if s == "uuid" {
			return ok(s)
		}
		return verdict.OpInfo, 500, `{"title":"Internal Server Error"}`
	}
	v, msg, _ = judgeWith(t, "key/valid-never-5xx", build(1, notUUID), p)
	require.Equal(t, verdict.Fail, v)
	require.Contains(t, msg, "ulid (26 characters): 500")
	require.Contains(t, msg, "len-255 (255 characters): 500")

	refuseLong := func(s string) (verdict.OpType, int, string) {
		if s == "len-255" {
			return verdict.OpFail, 400, `{}`
		}
		return ok(s)
	}
	v, msg, _ = judgeWith(t, "key/valid-never-5xx", build(4, refuseLong), p)
	require.Equal(t, verdict.Pass, v, "a refusal is not a 5xx: %s", msg)
	require.Contains(t, msg, "refused, not a 5xx: len-255: 400 (missing_key)")

	v, _, ev = judgeWith(t, "key/valid-never-5xx", build(10, ok), p)
	require.Equal(t, verdict.Fail, v)
	require.Equal(t, 5, ev.Categories["duplicated"])

	// The ULID key's repeat answered after the declared retention (1 s) with a response of
	// its own and a side effect of its own: allowed there, not a divergence.
	lateULID := func(ledger int, took int) verdict.Record {
		h := newHistory()
		ms := 0
		for _, s := range shapes {
			key := strings.Repeat("k", shapeLength[s])
			h.at(ms, s, verdict.OpOK, 201, `{"id":"`+s+`"}`, nil).keyed(key)
			again, d := `{"id":"`+s+`"}`, 1
			if s == "ulid" {
				again, d = `{"id":"ulid-anew"}`, took
			}
			h.span(ms+1, ms+1+d, s+"-again", verdict.OpOK, 201, again, nil).keyed(key)
			ms += 2 + d
		}
		return h.record(ledger)
	}
	for _, ledger := range []int{5, 6} {
		v, msg, _ = judgeWith(t, "key/valid-never-5xx", lateULID(ledger, 1500), p)
		require.Equal(t, verdict.Pass, v, "ledger %d: %s", ledger, msg)
		require.Contains(t, msg, "the repeat of the ulid key(s) got a response of its own but it may have reached the target after the declared 1s retention")
	}
	v, _, _ = judgeWith(t, "key/valid-never-5xx", lateULID(7, 1500), p)
	require.Equal(t, verdict.Fail, v, "one late repeat allows one more side effect, not two")
	v, _, ev = judgeWith(t, "key/valid-never-5xx", lateULID(5, 900), p)
	require.Equal(t, verdict.Fail, v, "inside the window the difference is a divergence")
	require.Equal(t, 1, ev.Categories["diverged"])
}

func TestEmptyQuotedKey(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	pair := func(typ verdict.OpType, status int, body string, ledger int) verdict.Record {
		return newHistory().at(0, "empty-quoted", typ, status, body, nil).at(5, "empty-quoted-again", typ, status, body, nil).record(ledger)
	}
	v, msg, _ := judgeWith(t, "key/empty-quoted", pair(verdict.OpFail, 400, `{}`, 0), p)
	require.Equal(t, verdict.Pass, v, msg)
	v, msg, _ = judgeWith(t, "key/empty-quoted", pair(verdict.OpOK, 201, `{"id":"re_1"}`, 1), p)
	require.Equal(t, verdict.Info, v, "opaque keys: a policy, as key/sf-string reports it")
	require.Contains(t, msg, "used as a key")
	v, msg, _ = judgeWith(t, "key/empty-quoted", pair(verdict.OpOK, 201, `{"id":"re_1"}`, 2), p)
	require.Equal(t, verdict.NonStrict, v)
	require.Contains(t, msg, "executed as unkeyed")
	v, _, _ = judgeWith(t, "key/empty-quoted", pair(verdict.OpInfo, 0, "", 0), p)
	require.Equal(t, verdict.Unknown, v)
}

func TestKeyOnAGetIsIgnored(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	require.Empty(t, p.Missing(profile.CapKeyedMethods))
	const read0, read1, created = `{"data":[],"count":0}`, `{"data":[{"id":"re_1"}],"count":1}`, `{"id":"re_1"}`
	run := func(before, post, after string, postStatus, ledger int) (verdict.Verdict, string) {
		postType := verdict.OpOK
		if postStatus >= 400 {
			postType = verdict.OpFail
		}
		rec := newHistory().at(0, "get-before", verdict.OpOK, 200, before, nil).
			at(5, "original", postType, postStatus, post, nil).
			at(10, "get-after", verdict.OpOK, 200, after, nil).record(ledger)
		v, msg, _ := judgeWith(t, "key/get-ignored", rec, p)
		return v, msg
	}
	v, msg := run(read0, created, read1, 201, 1)
	require.Equal(t, verdict.Pass, v, msg)
	// A profile whose success rule only the operation's answers match (Adyen's
	// resultCode) classes a ledger read client_error: the reads are judged by status.
	rec := newHistory().at(0, "get-before", verdict.OpFail, 200, read0, nil).
		at(5, "original", verdict.OpOK, 201, created, nil).
		at(10, "get-after", verdict.OpFail, 200, read1, nil).record(1)
	for i := range rec.History {
		if rec.History[i].Step != "original" && rec.History[i].Type == verdict.OpFail {
			rec.History[i].Class = outcome.ClientError
		}
	}
	v, msg, _ = judgeWith(t, "key/get-ignored", rec, p)
	require.Equal(t, verdict.Pass, v, msg)
	v, msg = run(read0, read0, read0, 200, 0)
	require.Equal(t, verdict.Fail, v)
	require.Contains(t, msg, "the GET was stored under the key and replayed")
	v, msg = run(read0, `{}`, read1, 422, 0)
	require.Equal(t, verdict.Fail, v)
	require.Contains(t, msg, "the GET was recorded under the key")
	v, msg = run(read0, created, created, 201, 1)
	require.Equal(t, verdict.Fail, v)
	require.Contains(t, msg, "answered the POST's stored response")

	p.KeyedMethods = nil
	require.Equal(t, "keyed_methods not declared", p.Missing(profile.CapKeyedMethods))
	p.KeyedMethods = []string{"POST", "GET"}
	require.Contains(t, p.Missing(profile.CapKeyedMethods), "includes the ledger's method GET")
}

func TestKeepAliveManyKeys(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	// build answers 4 keys per route; answer(route, i) gives the first and repeat bodies.
	// buildTimed's repeats take repeatTook(route, i) milliseconds from invoke to answer.
	buildTimed := func(ledger int, answer func(route string, i int) (first, again verdict.Op), repeatTook func(route string, i int) int) verdict.Record {
		h := newHistory()
		ms := 0
		for _, route := range []string{"proxied", "direct"} {
			for i := 0; i < 4; i++ {
				key := fmt.Sprintf("k-%s%03d", route[:1], i)
				a, b := answer(route, i)
				took := repeatTook(route, i)
				h.at(ms, route, a.Type, a.Status, string(a.Body), nil).keyed(key)
				h.span(ms+1, ms+1+took, route+"-again", b.Type, b.Status, string(b.Body), nil).keyed(key)
				h.ops[len(h.ops)-1].ReusedConn = true // the repeat follows on its key's connection
				ms += 1 + took
			}
		}
		return h.record(ledger)
	}
	build := func(ledger int, answer func(route string, i int) (first, again verdict.Op)) verdict.Record {
		return buildTimed(ledger, answer, func(string, int) int { return 1 })
	}
	own := func(route string, i int) (verdict.Op, verdict.Op) {
		b := []byte(fmt.Sprintf(`{"id":"re_%s%d"}`, route, i))
		return verdict.Op{Type: verdict.OpOK, Status: 201, Body: b}, verdict.Op{Type: verdict.OpOK, Status: 201, Body: b}
	}
	v, msg, _ := judgeWith(t, "race/keepalive-many-keys", build(8, own), p)
	require.Equal(t, verdict.Pass, v, msg)

	// A target that closes every connection: no key met another on a connection, so the
	// property was not exercised (INFO, not a PASS). Through the proxy the client's
	// connections are the proxy's and tell nothing.
	closing := build(8, own)
	for i := range closing.History {
		closing.History[i].ReusedConn = closing.History[i].Step == "proxied-again"
	}
	v, msg, _ = judgeWith(t, "race/keepalive-many-keys", closing, p)
	require.Equal(t, verdict.Info, v, msg)
	require.Contains(t, msg, "the target kept no connection alive")
	// A direct step that went through the proxy (its keys journaled) cannot tell.
	viaProxy := closing
	for _, op := range closing.History {
		if op.Step == "direct" && op.Type != verdict.OpInvoke {
			viaProxy.Journal = append(viaProxy.Journal, faultproxy.Record{Key: op.Key, HasKey: true})
		}
	}
	v, msg, _ = judgeWith(t, "race/keepalive-many-keys", viaProxy, p)
	require.Equal(t, verdict.Pass, v, msg)

	// Key i on a connection finds key i-1's record: its answer is i-1's, no effect of its own.
	aliased := func(route string, i int) (verdict.Op, verdict.Op) {
		if i%2 == 1 {
			return own(route, i-1)
		}
		return own(route, i)
	}
	v, msg, ev := judgeWith(t, "race/keepalive-many-keys", build(4, aliased), p)
	require.Equal(t, verdict.Fail, v)
	require.Contains(t, msg, "never executed")
	require.Equal(t, 4, ev.Categories["lost"])
	require.NotEmpty(t, ev.Examples, "the keys that share a response are named")

	diverged := func(route string, i int) (verdict.Op, verdict.Op) {
		a, b := own(route, i)
		if i == 2 {
			b.Body = []byte(`{"id":"re_other"}`)
		}
		return a, b
	}
	v, _, ev = judgeWith(t, "race/keepalive-many-keys", build(8, diverged), p)
	require.Equal(t, verdict.Fail, v)
	require.Equal(t, 2, ev.Categories["diverged"])

	// A repeat answered after the declared retention (1 s here) may have reached the
	// target past its key's window and executed anew: a response of its own and one more
	// side effect are allowed there, never a FAIL. A loaded CI machine did exactly this to
	// the correct reference on PostgreSQL (repeats 8 s after their first, retention 3 s).
	slowDirect2 := func(route string, i int) int {
		if route == "direct" && i == 2 {
			return 1500
		}
		return 1
	}
	for _, ledger := range []int{8, 9} {
		v, msg, ev = judgeWith(t, "race/keepalive-many-keys", buildTimed(ledger, diverged, slowDirect2), p)
		require.Equal(t, verdict.Fail, v, "the proxied key 2's repeat was inside the window: %s", msg)
		require.Equal(t, 1, ev.Categories["diverged"], msg)
	}
	divergedDirect := func(route string, i int) (verdict.Op, verdict.Op) {
		if route == "proxied" {
			return own(route, i)
		}
		return diverged(route, i)
	}
	for _, ledger := range []int{8, 9} {
		v, msg, _ = judgeWith(t, "race/keepalive-many-keys", buildTimed(ledger, divergedDirect, slowDirect2), p)
		require.Equal(t, verdict.Pass, v, "ledger %d: %s", ledger, msg)
		require.Contains(t, msg, "1 repeats got a response of their own but they may have reached the target after the declared 1s retention")
		require.Contains(t, msg, "each of the 7 repeats compared replayed its own response")
	}
	v, _, _ = judgeWith(t, "race/keepalive-many-keys", buildTimed(10, divergedDirect, slowDirect2), p)
	require.Equal(t, verdict.Fail, v, "one late repeat allows one more side effect, not two")
	// The same difference inside the window is still a FAIL.
	v, _, ev = judgeWith(t, "race/keepalive-many-keys", buildTimed(8, divergedDirect, func(string, int) int { return 900 }), p)
	require.Equal(t, verdict.Fail, v)
	require.Equal(t, 1, ev.Categories["diverged"])

	// Timeouts are info: the ledger may hold an effect for them or not; never a FAIL.
	timedOut := func(route string, i int) (verdict.Op, verdict.Op) {
		if i == 3 {
			return verdict.Op{Type: verdict.OpInfo}, verdict.Op{Type: verdict.OpInfo}
		}
		return own(route, i)
	}
	for _, ledger := range []int{6, 7, 8} {
		v, msg, _ = judgeWith(t, "race/keepalive-many-keys", build(ledger, timedOut), p)
		require.Equal(t, verdict.Pass, v, "ledger %d: %s", ledger, msg)
		require.Contains(t, msg, "4 attempts timed out (info)")
	}
	v, _, _ = judgeWith(t, "race/keepalive-many-keys", build(9, timedOut), p)
	require.Equal(t, verdict.Fail, v)

	// Throttled (429) keys never reached the key's logic: with most of them throttled,
	// too few keys ran to show anything (INFO, not a PASS of "8 keys").
	throttled := func(route string, i int) (verdict.Op, verdict.Op) {
		if i > 0 {
			no := verdict.Op{Type: verdict.OpInfo, Status: 429, Body: []byte(`{"error":"rate_limited"}`)}
			return no, no
		}
		return own(route, i)
	}
	v, msg, _ = judgeWith(t, "race/keepalive-many-keys", build(2, throttled), p)
	require.Equal(t, verdict.Info, v, msg)
	require.Contains(t, msg, "only 2 of the 8 keys were seen executing")
	require.Contains(t, msg, "12 throttled (429)")

	// A later step with the scenario's own key (a settle step) may add its own effect.
	settled := build(9, own)
	settled.History = append(settled.History,
		verdict.Op{Type: verdict.OpInvoke, Step: "settle"},
		verdict.Op{Type: verdict.OpOK, Step: "settle", Status: 201, Body: []byte(`{"id":"re_settle"}`)})
	v, msg, _ = judgeWith(t, "race/keepalive-many-keys", settled, p)
	require.Equal(t, verdict.Pass, v, msg)

	allInfo := func(string, int) (verdict.Op, verdict.Op) {
		return verdict.Op{Type: verdict.OpInfo}, verdict.Op{Type: verdict.OpInfo}
	}
	v, _, _ = judgeWith(t, "race/keepalive-many-keys", build(3, allInfo), p)
	require.Equal(t, verdict.Unknown, v)
}

func TestRefusalsAreProblemDetails(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	problem := map[string]string{"Content-Type": "application/problem+json"}
	rec := func(conflictHeaders map[string]string, conflictBody string) verdict.Record {
		return newHistory().
			at(0, "unkeyed", verdict.OpFail, 400, `{"type":"https://x/missing","title":"Idempotency-Key missing"}`, problem).
			at(5, "repeat", verdict.OpFail, 409, conflictBody, conflictHeaders).
			span(1, 300, "original", verdict.OpOK, 201, `{"id":"re_1"}`, nil).
			at(310, "mismatch", verdict.OpFail, 422, `{"title":"reused"}`, map[string]string{"Content-Type": "application/problem+json; charset=utf-8"}).
			record(1)
	}
	v, msg, _ := judgeWith(t, "errors/problem-json", rec(problem, `{"title":"in use"}`), p)
	require.Equal(t, verdict.Pass, v, msg)
	require.Contains(t, msg, "400, 409, 422")

	v, msg, _ = judgeWith(t, "errors/problem-json", rec(map[string]string{"Content-Type": "text/plain"}, "in use"), p)
	require.Equal(t, verdict.NonStrict, v)
	require.Contains(t, msg, `409 (repeat): Content-Type "text/plain", want application/problem+json`)

	v, msg, _ = judgeWith(t, "errors/problem-json", rec(problem, `{"detail":"no title"}`), p)
	require.Equal(t, verdict.NonStrict, v)
	require.Contains(t, msg, `no "type" or "title" member`)

	// The delayed repeat reached the target first: the original is the one refused in
	// flight, and its 409 is inspected.
	overtaken := newHistory().
		at(0, "unkeyed", verdict.OpFail, 400, `{"title":"Idempotency-Key missing"}`, problem).
		span(1, 300, "repeat", verdict.OpOK, 201, `{"id":"re_1"}`, nil).
		at(5, "original", verdict.OpFail, 409, "in use", map[string]string{"Content-Type": "text/plain"}).
		at(310, "mismatch", verdict.OpFail, 422, `{"title":"reused"}`, problem).
		record(1)
	v, msg, _ = judgeWith(t, "errors/problem-json", overtaken, p)
	require.Equal(t, verdict.NonStrict, v, msg)
	require.Contains(t, msg, `409 (original): Content-Type "text/plain"`)

	unseen := newHistory().at(0, "unkeyed", verdict.OpOK, 201, `{}`, nil).at(5, "repeat", verdict.OpOK, 201, `{}`, nil).
		at(10, "mismatch", verdict.OpInfo, 0, "", nil).record(1)
	v, _, _ = judgeWith(t, "errors/problem-json", unseen, p)
	require.Equal(t, verdict.Unknown, v, "the one answer that could have been a refusal timed out")

	none := newHistory().at(0, "unkeyed", verdict.OpOK, 201, `{}`, nil).at(5, "repeat", verdict.OpOK, 201, `{}`, nil).
		at(10, "mismatch", verdict.OpOK, 201, `{}`, nil).record(1)
	v, msg, _ = judgeWith(t, "errors/problem-json", none, p)
	require.Equal(t, verdict.Info, v, "nothing refused, nothing to inspect: %s", msg)
}

func TestRetryAfterMustParse(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	for value, want := range map[string]verdict.Verdict{
		"1":                              verdict.Pass,
		"120":                            verdict.Pass,
		"Fri, 31 Dec 1999 23:59:59 GMT":  verdict.Pass,
		"Friday, 31-Dec-99 23:59:59 GMT": verdict.Pass,
		"1.5":                            verdict.NonStrict,
		"soon":                           verdict.NonStrict,
		"-1":                             verdict.NonStrict,
		"2026-01-01T00:00:00Z":           verdict.NonStrict,
	} {
		rec := newHistory().span(0, 300, "original", verdict.OpOK, 201, `{}`, nil).
			at(50, "repeat", verdict.OpFail, 409, `{}`, map[string]string{"Retry-After": value}).record(1)
		v, msg, _ := judgeWith(t, "race/in-flight-retry-after", rec, p)
		require.Equal(t, want, v, "%q: %s", value, msg)
		if want == verdict.NonStrict {
			require.Contains(t, msg, "neither delta-seconds nor an HTTP-date")
		}
	}
}

// withClasses sets the outcome class of the named steps' answers, as a profile's outcome
// rules would (a JSON-RPC error object inside a 200).
func withClasses(rec verdict.Record, classes map[string]outcome.Class) verdict.Record {
	for i, op := range rec.History {
		if c, ok := classes[op.Step]; ok && op.Type != verdict.OpInvoke {
			rec.History[i].Class = c
		}
	}
	return rec
}

// A plain JSON-RPC server refuses inside 200s: neither RFC 9457 nor Retry-After speaks of
// those, so there is nothing to hold against it.
func TestRefusalsInsideA200AreNoHTTPRefusals(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	rpcError := func(code int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"error":{"code":%d,"message":"no"}}`, code)
	}
	jsonType := map[string]string{"Content-Type": "application/json"}
	rec := withClasses(newHistory().
		at(0, "unkeyed", verdict.OpFail, 200, rpcError(-32602), jsonType).
		at(5, "repeat", verdict.OpFail, 200, rpcError(-32011), jsonType).
		span(1, 300, "original", verdict.OpOK, 200, `{"jsonrpc":"2.0","id":1,"result":{"id":"re_1"}}`, nil).
		at(310, "mismatch", verdict.OpFail, 200, rpcError(-32010), jsonType).
		record(1), map[string]outcome.Class{"unkeyed": outcome.MissingKey, "repeat": outcome.InFlight, "mismatch": outcome.Mismatch})
	v, msg, _ := judgeWith(t, "errors/problem-json", rec, p)
	require.Equal(t, verdict.Info, v, msg)
	require.Contains(t, msg, "repeat 200 (in_flight)")

	v, msg, _ = judgeWith(t, "race/in-flight-retry-after", rec, p)
	require.Equal(t, verdict.Info, v, msg)
	require.Contains(t, msg, "no HTTP refusal to carry a Retry-After")

	// A refusal inside a 200 that carries Retry-After all the same is judged by it.
	withRA := func(ra string) verdict.Record {
		return withClasses(newHistory().
			span(1, 300, "original", verdict.OpOK, 200, `{"jsonrpc":"2.0","id":1,"result":{"id":"re_1"}}`, nil).
			at(5, "repeat", verdict.OpFail, 200, rpcError(-32010), map[string]string{"Content-Type": "application/json", "Retry-After": ra}).
			record(1), map[string]outcome.Class{"repeat": outcome.InFlight})
	}
	v, msg, _ = judgeWith(t, "race/in-flight-retry-after", withRA("1"), p)
	require.Equal(t, verdict.Pass, v, msg)
	require.Contains(t, msg, "carries Retry-After: 1")
	v, msg, _ = judgeWith(t, "race/in-flight-retry-after", withRA("soon"), p)
	require.Equal(t, verdict.NonStrict, v, msg)
}

// A JSON-RPC server says in its error's data when to come back, and the profile's
// in_flight rule declares where (retry_after): the hint is judged as Retry-After would be.
func TestRetryHintInsideTheRefusal(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	var outcomes profile.Outcomes
	require.NoError(t, yaml.Unmarshal([]byte(`in_flight: {status: 200, json: {path: error.code, equals: -32010}, retry_after: {path: error.data.retry_after_ms, unit: ms}}`), &outcomes))
	p.Outcomes = &outcomes
	refusal := func(data string, header map[string]string) verdict.Record {
		return withClasses(newHistory().
			span(1, 300, "original", verdict.OpOK, 200, `{"jsonrpc":"2.0","id":1,"result":{"id":"re_1"}}`, nil).
			at(5, "repeat", verdict.OpFail, 200, `{"jsonrpc":"2.0","id":1,"error":{"code":-32010,"message":"in progress"`+data+`}}`, header).
			record(1), map[string]outcome.Class{"repeat": outcome.InFlight})
	}
	v, msg, _ := judgeWith(t, "race/in-flight-retry-after", refusal(`,"data":{"retry_after_ms":500}`, nil), p)
	require.Equal(t, verdict.Pass, v, msg)
	require.Contains(t, msg, "says when to retry in its body: error.data.retry_after_ms = 500ms")

	v, msg, _ = judgeWith(t, "race/in-flight-retry-after", refusal(``, nil), p)
	require.Equal(t, verdict.NonStrict, v, msg)
	require.Contains(t, msg, "lacks the retry hint its in_flight rule declares: no number of at least 0 at error.data.retry_after_ms (ms)")

	v, msg, _ = judgeWith(t, "race/in-flight-retry-after", refusal(``, map[string]string{"Retry-After": "2"}), p)
	require.Equal(t, verdict.Pass, v, msg, "a Retry-After says it as well")
	require.Contains(t, msg, "carries Retry-After: 2")

	// Over MCP a refusal has no header: without a declared hint the scenario cannot apply.
	mcpP, err := profile.Parse("mcp.yaml", []byte(mcpProfile(t)))
	require.NoError(t, err)
	require.Contains(t, mcpP.Missing(profile.CapRetryHint), "declare where with retry_after on the in_flight rule")
	require.Empty(t, p.Missing(profile.CapRetryHint), "over HTTP a refusal may carry Retry-After")
	hinted, err := profile.Parse("mcp.yaml", []byte(strings.Replace(mcpProfile(t), "in_flight: {json: {path: error.code, equals: -32010}}",
		"in_flight: {json: {path: error.code, equals: -32010}, retry_after: {path: error.data.retry_after_ms, unit: ms}}", 1)))
	require.NoError(t, err)
	require.Empty(t, hinted.Missing(profile.CapRetryHint))
}

// mcpProfile is the profile package's complete MCP test profile (refusals inside a 200,
// the key in _meta).
func mcpProfile(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../profile/testdata/mcp-refunds.yaml")
	require.NoError(t, err)
	return string(b)
}

// A malformed key refused with the status the profile declares for a missing key is
// "classed as missing_key", not a missing key: the class name says what the profile
// made of the status, and only fits the empty key.
func TestARefusedMalformedKeySaysHowItWasClassed(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	refused := func(step string) verdict.Record {
		return newHistory().at(0, step, verdict.OpFail, 400, `{}`, nil).record(0)
	}
	for id, step := range map[string]string{"key/over-length": "long", "key/control-chars": "control"} {
		v, msg, _ := judgeWith(t, id, refused(step), p)
		require.Equal(t, verdict.Pass, v, id)
		require.Equal(t, "refused with 400 (classed as missing_key); nothing executed", msg, id)
	}
	v, msg, _ := judgeWith(t, "key/empty", refused("empty"), p)
	require.Equal(t, verdict.Pass, v)
	require.Equal(t, "refused with 400 (missing_key); nothing executed", msg, "an empty key is a missing one")

	v, msg, _ = judgeWith(t, "key/empty-quoted",
		newHistory().at(0, "empty-quoted", verdict.OpFail, 400, `{}`, nil).at(5, "empty-quoted-again", verdict.OpFail, 400, `{}`, nil).record(0), p)
	require.Equal(t, verdict.Pass, v)
	require.Equal(t, `the key "" was refused with 400 (classed as missing_key); nothing executed`, msg)
}

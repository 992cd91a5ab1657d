package scan

// The judges are pure functions of what a probe saw: tested here on the inside, as the
// catalogue's member changes are (scenarios/member_change_test.go), every branch with the
// answers that lead to it.

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/transport"
	"github.com/idemproof/idemproof/verdict"
)

func ok(body string) transport.Answer {
	return transport.Answer{Status: 200, Class: outcome.Success, Body: []byte(body)}
}

func refused(status int, body string) transport.Answer {
	return transport.Answer{Status: status, Class: outcome.ClientError, Body: []byte(body), Header: http.Header{}}
}

var lostOK = &committed{reached: true, status: 201, body: []byte(`{"id":"r1","amount":5}`), class: outcome.Success, faulted: true}

func TestJudgeReplay(t *testing.T) {
	t.Parallel()
	byID := evidenceBy{field: "id"}
	cases := []struct {
		name  string
		o     lostAnswer
		by    evidenceBy
		want  verdict.Verdict
		execs executions
		text  string
	}{
		{"replayed", lostAnswer{keyed: true, committed: lostOK, repeat: ok(`{"id":"r1","amount":5}`)}, byID, verdict.Pass, execOnce, `replayed: the repeat with the same key got id "r1", the lost answer's`},
		{"executed again", lostAnswer{keyed: true, committed: lostOK, repeat: ok(`{"id":"r2","amount":5}`)}, byID, verdict.Fail, execTwice, `executed twice: the lost answer had id "r1", the repeat with the same key "r2"`},
		{"plain repeat executed again", lostAnswer{committed: lostOK, repeat: ok(`{"id":"r2"}`)}, byID, verdict.Fail, execTwice, `the repeat "r2"`},
		{"the value missing", lostAnswer{keyed: true, committed: lostOK, repeat: ok(`{"amount":5}`)}, byID, verdict.Unknown, execUnknown, "id missing from the repeat's answer"},
		{"no value, the same body", lostAnswer{keyed: true, committed: lostOK, repeat: ok(`{"amount":5,"id":"r1"}`)}, evidenceBy{}, verdict.Unknown, execUnknown, "succeeded with the lost answer's body; " + noValue},
		{"ledger one", lostAnswer{keyed: true, committed: lostOK, repeat: ok(`{}`)}, evidenceBy{ledger: &counted{what: "L", n: 1}}, verdict.Pass, execOnce, "the ledger (L) counted 1"},
		{"ledger two", lostAnswer{keyed: true, committed: lostOK, repeat: ok(`{}`)}, evidenceBy{ledger: &counted{what: "L", n: 2}}, verdict.Fail, execTwice, "executed 2 times"},
		// One execution, yet the repeat was told another result than the one it had.
		{"ledger one, a re-rendered replay", lostAnswer{keyed: true, committed: lostOK, repeat: ok(`{"id":"r2","amount":5}`)}, evidenceBy{field: "id", ledger: &counted{what: "L", n: 1}}, verdict.Fail, execOnce,
			`one execution (the ledger, L, counted 1), but the repeat with the same key was not answered with its result: the lost answer had id "r1", the repeat with the same key "r2" (made up, or re-rendered)`},
		{"ledger one, the lost answer's value", lostAnswer{keyed: true, committed: lostOK, repeat: ok(`{"id":"r1","amount":5}`)}, evidenceBy{field: "id", ledger: &counted{what: "L", n: 1}}, verdict.Pass, execOnce, "the ledger (L) counted 1"},
		{"ledger blind", lostAnswer{keyed: true, committed: lostOK, repeat: ok(`{}`)}, evidenceBy{ledger: &counted{what: "L"}}, verdict.Unknown, execUnknown, "does not see"},
		{"ledger unreadable", lostAnswer{keyed: true, committed: lostOK, repeat: ok(`{}`)}, evidenceBy{ledger: &counted{what: "L", err: "boom"}}, verdict.Unknown, execUnknown, "the ledger could not be read (boom)"},
		{"a keyed repeat refused", lostAnswer{keyed: true, committed: lostOK, repeat: refused(422, `{"detail":"reused"}`)}, byID, verdict.Fail, execUnknown, "refused with 422 (reused) after the lost answer committed"},
		{"a plain repeat refused", lostAnswer{committed: lostOK, repeat: refused(409, `{"detail":"exists"}`)}, byID, verdict.Unknown, execUnknown, "refused with 409 (exists): not executed again by its own account"},
		{"still in flight", lostAnswer{keyed: true, committed: lostOK, inFlight: 5, repeat: refused(409, `{"detail":"in flight"}`)}, byID, verdict.Unknown, execUnknown, "still answered in flight after 6 tries"},
		{"the repeat unseen", lostAnswer{keyed: true, committed: lostOK, repeat: transport.Answer{Class: outcome.Info, Err: "timed-out"}}, byID, verdict.Unknown, execUnknown, "was not answered (timed-out)"},
		{"never reached", lostAnswer{keyed: true, committed: &committed{}}, byID, verdict.Unknown, execUnknown, "never reached the server"},
		{"no fault", lostAnswer{keyed: true, committed: &committed{reached: true, note: "response over buffer limit: fault not applied"}}, byID, verdict.Unknown, execUnknown, "did not lose the first answer (response over buffer limit"},
		{"nothing committed", lostAnswer{keyed: true, committed: &committed{reached: true, faulted: true, status: 500, body: []byte(`{"detail":"db down"}`), class: outcome.ServerError}}, byID, verdict.Unknown, execUnknown, "answered 500 (db down) by the server, not a success"},
		{"could not probe", lostAnswer{err: "session: 401"}, byID, verdict.Unknown, execUnknown, "could not probe: session: 401"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, execs := judgeReplay(c.o, c.by, KindOpenAPI)
			require.Equal(t, c.want, got.Verdict, got.Evidence)
			require.Equal(t, c.execs, execs)
			require.Contains(t, got.Evidence, c.text)
		})
	}
}

func TestJudgeChanged(t *testing.T) {
	t.Parallel()
	orig := ok(`{"id":"r1"}`)
	by := evidenceBy{field: "id"}
	control := ok(`{"id":"r3"}`)
	controlRefused := refused(400, `{"detail":"amount too high"}`)
	cases := []struct {
		name string
		o    changedRequest
		want verdict.Verdict
		text string
	}{
		{"refused, control executed", changedRequest{what: "amount 1 → 2", original: orig, changed: refused(422, `{"detail":"mismatch"}`), control: &control}, verdict.Pass, "refused: the same key with amount 1 → 2 got 422 (mismatch), while the changed arguments under a fresh key executed"},
		{"refused, control refused too", changedRequest{what: "amount 1 → 2", original: orig, changed: refused(422, `{}`), control: &controlRefused}, verdict.Unknown, "the change itself may be invalid"},
		{"the original's result", changedRequest{what: "amount 1 → 2", original: orig, changed: ok(`{"id":"r1"}`)}, verdict.Fail, `answered with the original's result (id "r1")`},
		{"executed under the key", changedRequest{what: "amount 1 → 2", original: orig, changed: ok(`{"id":"r2"}`)}, verdict.Fail, `executed under the reused key (id "r1", then "r2")`},
		{"unseen", changedRequest{what: "amount 1 → 2", original: orig, changed: transport.Answer{Class: outcome.Info, Err: "reset"}}, verdict.Unknown, "not answered (reset)"},
		{"the original failed", changedRequest{original: refused(400, `{"detail":"bad"}`)}, verdict.Unknown, "the original call got 400 (bad)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := judgeChanged(c.o, by, KindOpenAPI)
			require.Equal(t, c.want, got.Verdict, got.Evidence)
			require.Contains(t, got.Evidence, c.text)
		})
	}
}

func TestJudgeConcurrent(t *testing.T) {
	t.Parallel()
	by := evidenceBy{field: "id"}
	retryOne, retryTwo, retryRefused := ok(`{"id":"r1"}`), ok(`{"id":"r2"}`), refused(409, `{"detail":"in flight"}`)
	cases := []struct {
		name string
		o    concurrent
		by   evidenceBy
		want verdict.Verdict
		text string
	}{
		{"both got one", concurrent{a: ok(`{"id":"r1"}`), b: ok(`{"id":"r1"}`), met: true}, by, verdict.Pass, `one execution: the other copy got id "r1", the first copy's`},
		// A fast server may answer the first copy before the second arrives: nothing
		// concurrent was tested, whatever it counted.
		{"both got one, never met", concurrent{a: ok(`{"id":"r1"}`), b: ok(`{"id":"r1"}`), tries: 3}, by, verdict.Unknown, `one execution (the other copy got id "r1", the first copy's), but the two copies never met at the server (3 pairs sent)`},
		{"ledger one, never met", concurrent{a: ok(`{}`), b: ok(`{}`), tries: 1}, evidenceBy{ledger: &counted{what: "L", n: 1}}, verdict.Unknown, "one execution (the ledger, L, counted 1), but the two copies never met at the server (1 pair sent)"},
		{"two executions, never met", concurrent{a: ok(`{"id":"r1"}`), b: ok(`{"id":"r2"}`), tries: 1}, by, verdict.Fail, `two executions for one key: id "r1" and "r2"`},
		{"two executions", concurrent{a: ok(`{"id":"r1"}`), b: ok(`{"id":"r2"}`)}, by, verdict.Fail, `two executions for one key: id "r1" and "r2"`},
		{"refused, its retry replayed", concurrent{a: refused(409, `{"detail":"in flight"}`), b: ok(`{"id":"r1"}`), retry: &retryOne, met: true}, by, verdict.Pass, `the other copy got 409 (in flight); its retry got id "r1", the first copy's`},
		{"refused, its retry executed", concurrent{a: ok(`{"id":"r1"}`), b: refused(409, `{}`), retry: &retryTwo}, by, verdict.Fail, "two executions for one key"},
		{"refused, its retry refused", concurrent{a: ok(`{"id":"r1"}`), b: refused(409, `{}`), retry: &retryRefused}, by, verdict.Unknown, "whether it executed cannot be seen"},
		{"neither", concurrent{a: refused(409, `{}`), b: refused(409, `{}`)}, by, verdict.Unknown, "neither copy succeeded"},
		{"ledger one", concurrent{a: ok(`{}`), b: ok(`{}`), met: true}, evidenceBy{ledger: &counted{what: "L", n: 1}}, verdict.Pass, "counted 1 for two copies"},
		// One execution, yet one copy was told of a success without its result: made up.
		{"ledger one, a made-up success", concurrent{a: ok(`{"id":"r1"}`), b: ok(`{"status":"processing"}`), met: true}, evidenceBy{field: "id", ledger: &counted{what: "L", n: 1}}, verdict.Fail,
			`one execution (the ledger, L, counted 1), but the two copies were answered different successes: id "r1" and none — the other copy was not that execution's result`},
		{"ledger one, the same value", concurrent{a: ok(`{"id":"r1"}`), b: ok(`{"id":"r1"}`), met: true}, evidenceBy{field: "id", ledger: &counted{what: "L", n: 1}}, verdict.Pass, "counted 1 for two copies"},
		{"ledger two", concurrent{a: ok(`{}`), b: ok(`{}`)}, evidenceBy{ledger: &counted{what: "L", n: 2}}, verdict.Fail, "2 executions for one key"},
		{"no value", concurrent{a: ok(`{}`), b: ok(`{}`)}, evidenceBy{}, verdict.Unknown, noValue},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := judgeConcurrent(c.o, c.by, KindOpenAPI)
			require.Equal(t, c.want, got.Verdict, got.Evidence)
			require.Contains(t, got.Evidence, c.text)
		})
	}
}

func TestJudgeKeyAndAnnotation(t *testing.T) {
	t.Parallel()
	keyed := &Operation{Key: &Key{Place: PlaceMeta, Name: "idempotency_key", Why: "its description"}}
	require.Equal(t, Cell{Verdict: verdict.Pass, Evidence: "_meta.idempotency_key (its description)"}, judgeKey(keyed, execTwice), "a key declared is a key taken; whether it holds is the replay's column")
	plain := &Operation{}
	require.Equal(t, verdict.Fail, judgeKey(plain, execTwice).Verdict, "no key, and it executed twice: it needs one")
	require.Equal(t, verdict.NA, judgeKey(plain, execOnce).Verdict)
	require.Equal(t, verdict.NA, judgeKey(plain, execUnknown).Verdict)

	replay := Cell{Verdict: verdict.Fail, Evidence: "Executed twice: x"}
	claims := &Operation{IdempotentClaim: "idempotentHint: true"}
	require.Equal(t, Cell{Verdict: verdict.Fail, Evidence: "declares idempotentHint: true, and executed twice: x"}, judgeAnnotation(claims, replay, execTwice, nil))
	require.Equal(t, verdict.Pass, judgeAnnotation(claims, Cell{Evidence: "Replayed"}, execOnce, nil).Verdict)
	require.Equal(t, verdict.Unknown, judgeAnnotation(claims, Cell{Evidence: "no value"}, execUnknown, nil).Verdict)
	require.Equal(t, verdict.NA, judgeAnnotation(plain, replay, execTwice, nil).Verdict, "no claim, nothing to be dishonest about")
	require.Equal(t, "makes no idempotency claim (POST is not idempotent by its method)", judgeAnnotation(&Operation{Method: "POST"}, replay, execTwice, nil).Evidence)

	ro := &Operation{ReadOnly: true}
	require.Equal(t, verdict.Pass, judgeAnnotation(ro, replay, execUnknown, &counted{what: "L"}).Verdict)
	require.Equal(t, verdict.Fail, judgeAnnotation(ro, replay, execUnknown, &counted{what: "L", n: 2}).Verdict)
	require.Equal(t, verdict.Unknown, judgeAnnotation(ro, replay, execUnknown, nil).Verdict, "a read-only claim needs a ledger to check")
}

// Two copies met at the server when each was sent to it before the other was answered;
// one answered before the other left the proxy did not meet it, and records of another
// step, or that never reached the server, do not count.
func TestMetInTheJournal(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rec := func(tag string, atMs, forwardedMs, upstreamMs float64, reached bool) faultproxy.Record {
		return faultproxy.Record{Time: t0.Add(time.Duration(atMs * float64(time.Millisecond))), Headers: map[string]string{ProbeHeader: tag},
			ForwardedAfterMillis: forwardedMs, UpstreamMillis: upstreamMs, ReachedUpstream: reached}
	}
	met, seen := metIn([]faultproxy.Record{rec("s1", 0, 1, 10, true), rec("s1", 5, 1, 10, true)}, "s1")
	require.True(t, seen)
	require.True(t, met, "the second was sent at 6 ms, the first answered at 11 ms")

	met, seen = metIn([]faultproxy.Record{rec("s1", 0, 1, 10, true), rec("s1", 12, 1, 10, true)}, "s1")
	require.True(t, seen)
	require.False(t, met, "the first was answered at 11 ms, before the second was sent at 13 ms")

	_, seen = metIn([]faultproxy.Record{rec("s1", 0, 1, 10, true), rec("s2", 5, 1, 10, true), rec("s1", 5, 0, 0, false)}, "s1")
	require.False(t, seen, "one record of the step reached the server")
}

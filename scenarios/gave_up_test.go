package scenarios_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/verdict"
)

// disconnecting is a keyed refund API whose slow work meets a client that left: it
// carries on and commits, or abandons the work and releases the key (both correct), or
// keeps the refund but forgets the key, or abandons the work and leaves the key held
// (both wrong).
type disconnecting struct {
	onLeave string // "carry-on", "abandon", "forget-key", "wedge"
	// retention: a key is forgotten this long after its first request (0: never), as a
	// store that counts a key's life from its first record does.
	retention time.Duration
	// work is how long an execution the slow hook does not hold takes (0: none): a
	// target slow at its own work.
	work   time.Duration
	mu     sync.Mutex
	keys   map[string]*gaveUpEntry
	ledger map[string]int
	seq    int
}

type gaveUpEntry struct {
	done    bool
	body    []byte
	created time.Time
}

func (d *disconnecting) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		d.mu.Lock()
		n := d.ledger[r.URL.Query().Get("order_id")]
		d.mu.Unlock()
		writeJSON(w, 200, map[string]any{"count": n})
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	order, _ := body["order_id"].(string)
	key := r.Header.Get("Idempotency-Key")
	d.mu.Lock()
	if e, ok := d.keys[key]; ok && d.retention > 0 && time.Since(e.created) > d.retention {
		delete(d.keys, key)
	}
	if e, ok := d.keys[key]; ok {
		d.mu.Unlock()
		if !e.done {
			w.Header().Set("Retry-After", "1")
			writeJSON(w, 409, map[string]any{"error": "in flight"})
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Idempotent-Replayed", "true")
		w.WriteHeader(201)
		_, _ = w.Write(e.body)
		return
	}
	e := &gaveUpEntry{created: time.Now()}
	d.keys[key] = e
	d.mu.Unlock()
	hold, _ := time.ParseDuration(r.Header.Get("X-Test-Delay"))
	if hold == 0 {
		hold = d.work
	}
	left := false
	select {
	case <-time.After(hold):
	case <-r.Context().Done():
		left = true
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if left {
		switch d.onLeave {
		case "abandon":
			delete(d.keys, key)
			return
		case "wedge":
			return
		case "forget-key":
			d.ledger[order]++
			delete(d.keys, key)
			return
		}
	}
	d.ledger[order]++
	d.seq++
	e.body, _ = json.Marshal(map[string]any{"id": d.seq, "order_id": order})
	e.done = true
	if !left {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(201)
		_, _ = w.Write(e.body)
	}
}

func TestClientGaveUpJudgesWhatTheTargetDidWhenItsClientLeft(t *testing.T) {
	for _, tc := range []struct {
		name, onLeave string
		lock          time.Duration // the declared lock_timeout (0: none)
		want          verdict.Verdict
		msg           string
	}{
		{"carry-on", "carry-on", 0, verdict.Pass, "one side effect"},
		{"abandon", "abandon", 0, verdict.Pass, "one side effect"},
		{"forget-key", "forget-key", 0, verdict.Fail, "2 side effects for one key"},
		// A key still refused after the client left proves nothing until a declared
		// lock_timeout says how long the target may hold it.
		{"wedge without lock_timeout", "wedge", 0, verdict.Unknown, "declare lock_timeout to judge a stuck key"},
		{"wedge", "wedge", time.Second, verdict.Fail, "the key is stuck"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(&disconnecting{onLeave: tc.onLeave, keys: map[string]*gaveUpEntry{}, ledger: map[string]int{}})
			t.Cleanup(srv.Close)
			p := fakeProfile(t, srv.URL) // client_timeout 2s; the hook's value is the hold
			p.LockTimeout = profile.Duration(tc.lock)
			r := runOn(t, p, "recovery/client-gave-up")["recovery/client-gave-up"]
			require.Equal(t, tc.want, r.Verdict, r.Message)
			require.Contains(t, r.Message, "the client gave up after 2s while the work was held")
			require.Contains(t, r.Message, tc.msg)
		})
	}
}

func TestClientGaveUpIsUnknownWhenTheHookDidNotHold(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(&disconnecting{onLeave: "carry-on", keys: map[string]*gaveUpEntry{}, ledger: map[string]int{}})
	t.Cleanup(srv.Close)
	p := fakeProfile(t, srv.URL)
	p.Slow.Header = "X-Ignored" // the target never sees its hold
	r := runOn(t, p, "recovery/client-gave-up")["recovery/client-gave-up"]
	require.Equal(t, verdict.Unknown, r.Verdict, r.Message)
	require.Contains(t, r.Message, "the slow hook did not hold the work past it")
}

// An answer whose status came at once and whose body was cut at client_timeout (an MCP
// tool streaming progress before its result): the client gave up mid-work all the same,
// and the retry is judged.
func TestClientGaveUpMidAnswerIsJudged(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	rec := newHistory().span(0, 1000, "original", verdict.OpInfo, 200, `{"progress":`, nil).
		at(1100, "retry", verdict.OpOK, 201, `{"id":"re_1"}`, nil).record(1)
	rec.History[1].Class, rec.History[1].Error = outcome.Info, "truncated: timed-out"
	v, msg, _ := checker(t, "recovery/client-gave-up")(rec, p)
	require.Equal(t, verdict.Pass, v, msg)
	require.Contains(t, msg, "the client gave up after")

	rec.History[1].Error = "" // answered whole within client_timeout
	rec.History[1].Class = outcome.Success
	v, msg, _ = checker(t, "recovery/client-gave-up")(rec, p)
	require.Equal(t, verdict.Unknown, v, msg)
}

// A retry that came after the declared retention may execute anew: two effects are then
// allowed, and nothing shows the key held, so the verdict is UNKNOWN, never a PASS that
// says "one side effect" beside a ledger of two.
func TestClientGaveUpPastTheRetentionWithTwoEffectsIsUnknown(t *testing.T) {
	t.Parallel()
	p := refProfile(t) // retention 1 s
	rec := newHistory().span(0, 2000, "original", verdict.OpInfo, 0, "", nil).
		at(3750, "retry", verdict.OpOK, 201, `{"id":"re_2"}`, nil).record(2)
	rec.History[1].Error = "timed-out"
	v, msg, _ := checker(t, "recovery/client-gave-up")(rec, p)
	require.Equal(t, verdict.Unknown, v, msg)
	require.Contains(t, msg, "2 side effects")
	require.NotContains(t, msg, "one side effect")

	rec.Ledger["operation"] = 1
	v, msg, _ = checker(t, "recovery/client-gave-up")(rec, p)
	require.Equal(t, verdict.Pass, v, "one effect is proof whatever the retention: %s", msg)
}

// A gateway that gave up first (its 504 at its read timeout, inside client_timeout) is a
// client that left mid-work: the retry is judged, and the message says who left.
func TestAGatewayThatGaveUpFirstIsJudged(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	rec := newHistory().span(0, 1000, "original", verdict.OpInfo, 504, "<html>504 Gateway Time-out</html>", nil).
		at(2500, "retry", verdict.OpOK, 201, `{"id":"re_1"}`, nil).record(1)
	v, msg, _ := checker(t, "recovery/client-gave-up")(rec, p)
	require.Equal(t, verdict.Pass, v, msg)
	require.Contains(t, msg, "a gateway in front gave up")
	require.NotContains(t, msg, "did not hold")

	rec.Ledger["operation"] = 0
	v, _, _ = checker(t, "recovery/client-gave-up")(rec, p)
	require.Equal(t, verdict.Fail, v, "a success with no effect")
}

// A key still refused after the client gave up is stuck only once the hold the hook
// asked of the original has ended: before that the target may still be working on it
// (it carries on without its client, as it should). The hold is the one the journal
// shows the original carried.
func TestClientGaveUpStuckIsBoundedByTheHoldApplied(t *testing.T) {
	t.Parallel()
	p := refProfile(t) // lock_timeout 600ms, client_timeout 2s
	p.Retention = profile.Duration(time.Minute)
	wedged := func(hold string) verdict.Record {
		h := newHistory().span(0, 2000, "original", verdict.OpInfo, 0, "", nil).
			span(4000, 4010, "retry", verdict.OpFail, 409, "busy", nil)
		// Past the settle window: the lock's 800 ms and the client timeout an attempt
		// given up unanswered adds.
		for ms := 4100; ms <= 7100; ms += 300 {
			h.span(ms, ms+5, scenarios.SettleStep, verdict.OpFail, 409, "busy", nil)
		}
		rec := h.record(0)
		rec.History[1].Error = "timed-out"
		rec.Journal = []faultproxy.Record{{
			Seq: 1, Time: rec.History[0].Time, Method: "POST", Path: "/v1/refunds", Attempt: 1,
			Headers: map[string]string{"X-Test-Delay": hold}, ReachedUpstream: true, UpstreamCalls: 1,
			ForwardedAfterMillis: 1, UpstreamMillis: 2000, ClientResult: faultproxy.ClientTimedOut, Outcome: faultproxy.OutcomeInfo,
		}}
		return rec
	}
	v, msg, _ := checker(t, "recovery/client-gave-up")(wedged("3s"), p)
	require.Equal(t, verdict.Fail, v, msg)
	require.Contains(t, msg, "the key is stuck")

	v, msg, _ = checker(t, "recovery/client-gave-up")(wedged("10s"), p)
	require.Equal(t, verdict.Unknown, v, msg)
	require.Contains(t, msg, "the hold applied to it was 10s: the target may still have been working, so no stuck key is proven")
}

// A middleware that keeps the work of a client that left but forgets its key (a lease
// lost with the client) executes the retry again. The scenario is fitted to the declared
// 2 s retention (the client gives up after 850 ms, the retry goes at 1.6 s), but the
// retry's own execution takes a second, so its answer comes after the retention, and a
// request answered then may have arrived after it, where a new execution is allowed. A
// key held as long, whose client stayed, tells: its repeat, sent a little later after it
// than the retry after the original, still replays, so no record had expired, and the
// second execution is the lost key's. A target whose records expire sooner than declared
// replays nothing for the control either: that stays UNKNOWN.
func TestClientGaveUpDecidesPastTheRetentionWithAControlKey(t *testing.T) {
	for _, tc := range []struct {
		name        string
		onLeave     string
		expireAfter time.Duration
		want        verdict.Verdict
		msg         string
	}{
		{"lease lost with the client", "forget-key", 0, verdict.Fail, "a key held as long whose client stayed still replayed"},
		{"records expire early", "carry-on", 1400 * time.Millisecond, verdict.Unknown, "a key held as long whose client stayed was not replayed either"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(&disconnecting{onLeave: tc.onLeave, retention: tc.expireAfter, work: time.Second, keys: map[string]*gaveUpEntry{}, ledger: map[string]int{}})
			t.Cleanup(srv.Close)
			p := fakeProfile(t, srv.URL)
			p.Retention = profile.Duration(2 * time.Second)
			p.Expect.UniqueField = "id"
			r := runOn(t, p, "recovery/client-gave-up")["recovery/client-gave-up"]
			require.Equal(t, tc.want, r.Verdict, r.Message)
			require.Contains(t, r.Message, tc.msg)
			require.Equal(t, 2, r.Evidence.Record.Ledger[verdict.LedgerOperation], "the scenario's own key executed twice")
		})
	}
}

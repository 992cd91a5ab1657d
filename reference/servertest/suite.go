package servertest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idemproof/idemproof/reference"
	"github.com/idemproof/idemproof/reference/idempotency"
	"github.com/stretchr/testify/require"
)

const refunds = "/v1/refunds"

// Run is the HTTP-level rule suite of the reference server over store. burst is the
// number of concurrent first attempts of the race test (1,000 in the issue).
//
// A store that is an idempotency.LocalStore runs the reference's handlers on the
// one-transaction path; the few rules that differ there are checked as they hold there
// (no lock timeout: a running original keeps its key, a crashed one leaves none).
// TwoPhase hides a LocalStore's one-transaction ability, to run the suite on the
// two-phase path of the same store.
func Run(t *testing.T, store idempotency.Store, burst int) {
	_, local := store.(idempotency.LocalStore)
	t.Run("replay is byte for byte with the marker; the first response has none", func(t *testing.T) {
		e := Start(t, store)
		order, key := Fresh("o-"), Fresh("k-")
		first := e.Post(t, refunds, key, RefundBody(order, 4900))
		require.NoError(t, first.Err)
		require.Equal(t, http.StatusCreated, first.Status)
		require.False(t, first.Replayed())
		require.Equal(t, "application/json", first.Header.Get("Content-Type"))
		var res map[string]any
		require.NoError(t, json.Unmarshal(first.Body, &res))
		id, _ := res["id"].(string)
		require.True(t, strings.HasPrefix(id, "re_"), "id %q", id)
		require.Equal(t, "/v1/refunds/"+id, first.Header.Get("Location"))
		require.Equal(t, order, res["order_id"])
		require.EqualValues(t, 4900, res["amount"])

		for range 2 {
			again := e.Post(t, refunds, key, RefundBody(order, 4900))
			require.Equal(t, first.Status, again.Status)
			require.Equal(t, first.Body, again.Body)
			require.True(t, again.Replayed())
			require.Equal(t, first.Header.Get("Content-Type"), again.Header.Get("Content-Type"))
			require.Equal(t, first.Header.Get("Location"), again.Header.Get("Location"))
		}
		require.Equal(t, 1, e.Count(t, "refunds", order))
	})

	t.Run("key order, whitespace and number spelling do not change the fingerprint", func(t *testing.T) {
		e := Start(t, store)
		order, key := Fresh("o-"), Fresh("k-")
		first := e.Post(t, refunds, key, fmt.Sprintf(`{"order_id":%q,"amount":4900}`, order))
		require.Equal(t, http.StatusCreated, first.Status)
		for _, body := range []string{
			fmt.Sprintf(`{"amount":4900,"order_id":%q}`, order),
			fmt.Sprintf("{\n  \"order_id\": %q,\n  \"amount\": 4.9e3\n}", order),
			fmt.Sprintf(`{"order_id":%q,"amount":4900.0}`, order),
		} {
			again := e.Post(t, refunds, key, body)
			require.Equal(t, http.StatusCreated, again.Status, body)
			require.Equal(t, first.Body, again.Body)
		}
		require.Equal(t, 1, e.Count(t, "refunds", order))
	})

	t.Run("another payload with the key is 422, again on repeat, and the original stays intact", func(t *testing.T) {
		e := Start(t, store)
		order, key := Fresh("o-"), Fresh("k-")
		first := e.Post(t, refunds, key, RefundBody(order, 4900))
		require.Equal(t, http.StatusCreated, first.Status)
		for range 2 {
			changed := e.Post(t, refunds, key, RefundBody(order, 5000))
			require.Equal(t, http.StatusUnprocessableEntity, changed.Status)
			requireProblem(t, changed, "idempotency-key-reused")
			require.False(t, changed.Replayed())
		}
		again := e.Post(t, refunds, key, RefundBody(order, 4900))
		require.Equal(t, http.StatusCreated, again.Status)
		require.Equal(t, first.Body, again.Body)
		require.Equal(t, 1, e.Count(t, "refunds", order))
	})

	t.Run("a missing key is 400 and executes nothing", func(t *testing.T) {
		e := Start(t, store)
		order := Fresh("o-")
		r := e.Post(t, refunds, "", RefundBody(order, 4900))
		require.Equal(t, http.StatusBadRequest, r.Status)
		requireProblem(t, r, "idempotency-key-missing")
		require.Equal(t, 0, e.Count(t, "refunds", order))
	})

	t.Run("with keys optional an unkeyed request executes every time", func(t *testing.T) {
		e := Start(t, store, reference.WithKeysOptional(true))
		order := Fresh("o-")
		for range 2 {
			require.Equal(t, http.StatusCreated, e.Post(t, refunds, "", RefundBody(order, 4900)).Status)
		}
		require.Equal(t, 2, e.Count(t, "refunds", order))
	})

	t.Run("malformed keys are 400; 255 characters and the quoted form are accepted", func(t *testing.T) {
		e := Start(t, store)
		order := Fresh("o-")
		for _, key := range []string{`""`, strings.Repeat("k", 256), "tab\there", "caf\xc3\xa9"} {
			r := e.Post(t, refunds, key, RefundBody(order, 4900))
			require.Equal(t, http.StatusBadRequest, r.Status, "key %q", key)
			requireProblem(t, r, "idempotency-key-invalid")
		}
		require.Equal(t, 0, e.Count(t, "refunds", order))

		long := Fresh("k-") + strings.Repeat("x", 255-18)
		require.Len(t, long, 255)
		first := e.Post(t, refunds, long, RefundBody(order, 4900))
		require.Equal(t, http.StatusCreated, first.Status)
		require.Equal(t, first.Body, e.Post(t, refunds, long, RefundBody(order, 4900)).Body)

		key := Fresh("k-")
		quoted := e.Post(t, refunds, `"`+key+`"`, RefundBody(order, 4900))
		require.Equal(t, http.StatusCreated, quoted.Status)
		bare := e.Post(t, refunds, key, RefundBody(order, 4900))
		require.True(t, bare.Replayed(), "the quoted form is the same key")
		require.Equal(t, quoted.Body, bare.Body)
		require.Equal(t, 2, e.Count(t, "refunds", order))
	})

	t.Run("keys are case-sensitive and kept whole: keys differing in case or in their 255th character are two", func(t *testing.T) {
		e := Start(t, store)
		order := Fresh("o-")
		key := Fresh("Ab_9-")
		long := Fresh("k-") + strings.Repeat("p", 254-18)
		for _, pair := range [][2]string{{key, "aB_9-" + key[5:]}, {long + "1", long + "2"}} {
			first := e.Post(t, refunds, pair[0], RefundBody(order, 4900))
			require.Equal(t, http.StatusCreated, first.Status, "key %q", pair[0])
			second := e.Post(t, refunds, pair[1], RefundBody(order, 4900))
			require.Equal(t, http.StatusCreated, second.Status, "key %q", pair[1])
			require.False(t, second.Replayed(), "%q is another key than %q", pair[1], pair[0])
			require.NotEqual(t, first.Body, second.Body)
		}
		require.Equal(t, 4, e.Count(t, "refunds", order))
	})

	t.Run("the key header name is case-insensitive on the wire", func(t *testing.T) {
		e := Start(t, store)
		order, key := Fresh("o-"), Fresh("k-")
		status, body := rawPost(t, e.URL, refunds, "idempotency-key: "+key, RefundBody(order, 4900))
		require.Equal(t, http.StatusCreated, status)
		again := e.Post(t, refunds, key, RefundBody(order, 4900))
		require.True(t, again.Replayed())
		require.Equal(t, body, string(again.Body))
	})

	t.Run("a repeat while the original runs is 409 with Retry-After; another payload is 422", func(t *testing.T) {
		e := Start(t, store)
		order, key := Fresh("o-"), Fresh("k-")
		done := make(chan Reply, 1)
		go func() { done <- e.Post(t, refunds, key, RefundBody(order, 4900), reference.HeaderTestDelay, "1s") }()
		e.WaitHeld(t, reference.Anonymous, refunds, key)
		r := e.Post(t, refunds, key, RefundBody(order, 4900))
		require.Equal(t, http.StatusConflict, r.Status)
		requireProblem(t, r, "idempotency-key-in-use")
		secs, err := strconv.Atoi(r.Header.Get("Retry-After"))
		require.NoError(t, err)
		require.GreaterOrEqual(t, secs, 1)
		other := e.Post(t, refunds, key, RefundBody(order, 5000))
		if local {
			// The original's fingerprint is not committed yet: its key is only in use.
			require.Equal(t, http.StatusConflict, other.Status)
		} else {
			require.Equal(t, http.StatusUnprocessableEntity, other.Status)
		}
		first := <-done
		require.Equal(t, http.StatusCreated, first.Status)
		require.Equal(t, http.StatusUnprocessableEntity, e.Post(t, refunds, key, RefundBody(order, 5000)).Status)
		require.Equal(t, 1, e.Count(t, "refunds", order))
	})

	t.Run("keys are scoped per principal", func(t *testing.T) {
		e := Start(t, store)
		order, key := Fresh("o-"), Fresh("k-")
		alice := e.Post(t, refunds, key, RefundBody(order, 4900), "Authorization", "Bearer alice")
		bob := e.Post(t, refunds, key, RefundBody(order, 4900), "Authorization", "Bearer bob")
		anon := e.Post(t, refunds, key, RefundBody(order, 4900))
		for _, r := range []Reply{alice, bob, anon} {
			require.Equal(t, http.StatusCreated, r.Status)
			require.False(t, r.Replayed())
		}
		require.NotEqual(t, alice.Body, bob.Body)
		require.NotEqual(t, alice.Body, anon.Body)
		require.Equal(t, 3, e.Count(t, "refunds", order))
		require.Equal(t, alice.Body, e.Post(t, refunds, key, RefundBody(order, 4900), "Authorization", "Bearer alice").Body)
	})

	t.Run("with tokens configured unknown or missing credentials are 401", func(t *testing.T) {
		e := Start(t, store, reference.WithTokens("tok-a", "tok-b"))
		order := Fresh("o-")
		for _, auth := range []string{"", "Bearer nope", "Basic dG9rLWE6"} {
			r := e.Post(t, refunds, Fresh("k-"), RefundBody(order, 4900), "Authorization", auth)
			require.Equal(t, http.StatusUnauthorized, r.Status, "auth %q", auth)
			requireProblem(t, r, "unauthorized")
		}
		require.Equal(t, http.StatusCreated, e.Post(t, refunds, Fresh("k-"), RefundBody(order, 4900), "Authorization", "Bearer tok-a").Status)
		require.Equal(t, 1, e.Count(t, "refunds", order))
	})

	t.Run("keys are scoped per endpoint", func(t *testing.T) {
		e := Start(t, store)
		order, key := Fresh("o-"), Fresh("k-")
		refund := e.Post(t, refunds, key, RefundBody(order, 4900))
		invoice := e.Post(t, "/v1/invoices", key, fmt.Sprintf(`{"order_id":%q,"amount":4900}`, order))
		require.Equal(t, http.StatusCreated, refund.Status)
		require.Equal(t, http.StatusCreated, invoice.Status)
		require.False(t, invoice.Replayed())
		require.Contains(t, string(invoice.Body), `"id":"in_`)
		require.Equal(t, 1, e.Count(t, "refunds", order))
		require.Equal(t, 1, e.Count(t, "invoices", order))
	})

	t.Run("a validation error is not stored: the corrected request reuses the key", func(t *testing.T) {
		e := Start(t, store)
		order, key := Fresh("o-"), Fresh("k-")
		for _, body := range []string{`{"amount":4900}`, fmt.Sprintf(`{"order_id":%q,"amount":-5}`, order),
			fmt.Sprintf(`{"order_id":%q,"amount":49.5}`, order), fmt.Sprintf(`{"order_id":%q,"amount":"4900"}`, order), `not json`} {
			r := e.Post(t, refunds, key, body)
			require.Equal(t, http.StatusBadRequest, r.Status, body)
			requireProblem(t, r, "validation-failed")
		}
		ok := e.Post(t, refunds, key, RefundBody(order, 4900))
		require.Equal(t, http.StatusCreated, ok.Status)
		require.False(t, ok.Replayed())
		require.Equal(t, 1, e.Count(t, "refunds", order))
	})

	t.Run("a business error is executed and stored: replayed, no refund", func(t *testing.T) {
		e := Start(t, store)
		order, key := Fresh("o-"), Fresh("k-")
		first := e.Post(t, refunds, key, RefundBody(order, 2_000_000))
		require.Equal(t, http.StatusPaymentRequired, first.Status)
		requireProblem(t, first, "refund-limit-exceeded")
		again := e.Post(t, refunds, key, RefundBody(order, 2_000_000))
		require.Equal(t, http.StatusPaymentRequired, again.Status)
		require.True(t, again.Replayed())
		require.Equal(t, first.Body, again.Body)
		require.Equal(t, 0, e.Count(t, "refunds", order))
	})

	t.Run("a 5xx is not stored: the retry executes once", func(t *testing.T) {
		e := Start(t, store)
		order, key := Fresh("o-"), Fresh("k-")
		failed := e.Post(t, refunds, key, RefundBody(order, 4900), reference.HeaderTestFail, "503")
		require.Equal(t, http.StatusServiceUnavailable, failed.Status)
		require.Equal(t, 0, e.Count(t, "refunds", order), "the failed work is rolled back")
		retry := e.Post(t, refunds, key, RefundBody(order, 4900))
		require.Equal(t, http.StatusCreated, retry.Status)
		require.False(t, retry.Replayed())
		require.Equal(t, 1, e.Count(t, "refunds", order))
	})

	t.Run("slow work that then fails is held before it fails", func(t *testing.T) {
		// The hooks together are slow work that fails: a client meets a request in flight
		// that then fails (idemproof's race/in-flight-original-fails), on either path —
		// the one-transaction path holds its delay inside the transaction, which a failed
		// request never opens. A lower bound only: no machine is faster than a sleep.
		e := Start(t, store)
		order, key := Fresh("o-"), Fresh("k-")
		start := time.Now()
		failed := e.Post(t, refunds, key, RefundBody(order, 4900), reference.HeaderTestDelay, "300ms", reference.HeaderTestFail, "503")
		require.Equal(t, http.StatusServiceUnavailable, failed.Status)
		require.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond, "the failure came before the hold")
		require.Equal(t, 0, e.Count(t, "refunds", order))
	})

	t.Run("a repeat of a completed request replays even when its own work would fail", func(t *testing.T) {
		e := Start(t, store)
		order, key := Fresh("o-"), Fresh("k-")
		first := e.Post(t, refunds, key, RefundBody(order, 4900))
		require.Equal(t, http.StatusCreated, first.Status)
		again := e.Post(t, refunds, key, RefundBody(order, 4900), reference.HeaderTestFail, "503")
		require.Equal(t, http.StatusCreated, again.Status)
		require.True(t, again.Replayed())
		require.Equal(t, first.Body, again.Body)
		require.Equal(t, 1, e.Count(t, "refunds", order))
	})

	t.Run("a key past the window executes anew, before any cleanup", func(t *testing.T) {
		e := Start(t, store, reference.WithRetention(10*time.Second))
		order, key := Fresh("o-"), Fresh("k-")
		first := e.Post(t, refunds, key, RefundBody(order, 4900))
		e.Clock.Advance(10*time.Second - time.Millisecond)
		inside := e.Post(t, refunds, key, RefundBody(order, 4900))
		require.True(t, inside.Replayed())
		require.Equal(t, first.Body, inside.Body)
		e.Clock.Advance(time.Millisecond)
		after := e.Post(t, refunds, key, RefundBody(order, 4900))
		require.Equal(t, http.StatusCreated, after.Status)
		require.False(t, after.Replayed())
		require.NotEqual(t, first.Body, after.Body)
		require.Equal(t, 2, e.Count(t, "refunds", order))
	})

	t.Run("the cleanup job deletes expired keys", func(t *testing.T) {
		e := Start(t, store, reference.WithRetention(time.Second), reference.WithCleanupInterval(10*time.Millisecond))
		order, key := Fresh("o-"), Fresh("k-")
		start := e.Clock.Now()
		require.Equal(t, http.StatusCreated, e.Post(t, refunds, key, RefundBody(order, 4900)).Status)
		e.Clock.Advance(2 * time.Second)
		sc := idempotency.Scope{Principal: reference.Anonymous, Endpoint: "POST " + refunds, Key: key}
		deadline := time.Now().Add(10 * time.Second)
		for {
			// Looked up at the original time, the record is visible until it is deleted.
			_, ok, err := store.Lookup(t.Context(), sc, start)
			require.NoError(t, err)
			if !ok {
				break
			}
			require.True(t, time.Now().Before(deadline), "the cleanup job never deleted the expired key")
			time.Sleep(5 * time.Millisecond)
		}
	})

	t.Run("crash after the key insert: 409 until the lock timeout, then the retry executes once", func(t *testing.T) {
		e := Start(t, store, reference.WithLockTimeout(5*time.Second))
		order, key := Fresh("o-"), Fresh("k-")
		crashed := e.PostFresh(t, refunds, key, RefundBody(order, 4900), reference.HeaderTestCrash, "after-key")
		require.Error(t, crashed.Err, "a crash gives no response")
		require.Equal(t, 0, e.Count(t, "refunds", order))
		if local {
			// The crash rolled the transaction back: no key is left to wait for.
			held, err := store.(idempotency.LocalStore).Held(t.Context(), idempotency.Scope{
				Principal: reference.Anonymous, Endpoint: "POST " + refunds, Key: key})
			require.NoError(t, err)
			require.False(t, held, "the crashed transaction's lock is released")
		} else {
			require.Equal(t, http.StatusConflict, e.Post(t, refunds, key, RefundBody(order, 4900)).Status)
			e.Clock.Advance(5 * time.Second)
		}
		retry := e.Post(t, refunds, key, RefundBody(order, 4900))
		require.Equal(t, http.StatusCreated, retry.Status)
		require.False(t, retry.Replayed())
		require.Equal(t, retry.Body, e.Post(t, refunds, key, RefundBody(order, 4900)).Body)
		require.Equal(t, 1, e.Count(t, "refunds", order))
	})

	t.Run("crash after the commit: the retry gets the committed refund", func(t *testing.T) {
		e := Start(t, store)
		order, key := Fresh("o-"), Fresh("k-")
		crashed := e.PostFresh(t, refunds, key, RefundBody(order, 4900), reference.HeaderTestCrash, "after-commit")
		require.Error(t, crashed.Err, "a crash gives no response")
		require.Equal(t, 1, e.Count(t, "refunds", order))
		retry := e.Post(t, refunds, key, RefundBody(order, 4900))
		require.Equal(t, http.StatusCreated, retry.Status)
		require.True(t, retry.Replayed())
		require.Equal(t, 1, e.Count(t, "refunds", order))
	})

	t.Run("an original slower than the lock is fenced out after a takeover", func(t *testing.T) {
		if local {
			t.Skip("the one-transaction path has no lock timeout: see the next test")
		}
		e := Start(t, store, reference.WithLockTimeout(5*time.Second))
		order, key := Fresh("o-"), Fresh("k-")
		done := make(chan Reply, 1)
		go func() { done <- e.Post(t, refunds, key, RefundBody(order, 4900), reference.HeaderTestDelay, "1s") }()
		e.WaitHeld(t, reference.Anonymous, refunds, key)
		e.Clock.Advance(5 * time.Second)
		takeover := e.Post(t, refunds, key, RefundBody(order, 4900))
		require.Equal(t, http.StatusCreated, takeover.Status)
		original := <-done
		require.Equal(t, http.StatusConflict, original.Status)
		requireProblem(t, original, "idempotency-key-taken-over")
		require.Equal(t, 1, e.Count(t, "refunds", order))
		require.Equal(t, takeover.Body, e.Post(t, refunds, key, RefundBody(order, 4900)).Body)
	})

	t.Run("an original slower than the lock timeout keeps its key on the one-transaction path", func(t *testing.T) {
		if !local {
			t.Skip("the two-phase path takes a stale lock over: see the previous test")
		}
		e := Start(t, store, reference.WithLockTimeout(5*time.Second))
		order, key := Fresh("o-"), Fresh("k-")
		done := make(chan Reply, 1)
		go func() { done <- e.Post(t, refunds, key, RefundBody(order, 4900), reference.HeaderTestDelay, "1s") }()
		e.WaitHeld(t, reference.Anonymous, refunds, key)
		e.Clock.Advance(5 * time.Second)
		repeat := e.Post(t, refunds, key, RefundBody(order, 4900))
		require.Equal(t, http.StatusConflict, repeat.Status, "the running transaction holds the key")
		requireProblem(t, repeat, "idempotency-key-in-use")
		original := <-done
		require.Equal(t, http.StatusCreated, original.Status)
		require.Equal(t, 1, e.Count(t, "refunds", order))
		again := e.Post(t, refunds, key, RefundBody(order, 4900))
		require.True(t, again.Replayed())
		require.Equal(t, original.Body, again.Body)
	})

	t.Run(fmt.Sprintf("%d concurrent first attempts: one refund, every other answer 409 or the identical replay", burst), func(t *testing.T) {
		e := Start(t, store)
		order, key := Fresh("o-"), Fresh("k-")
		replies := Burst(t, e, burst, key, RefundBody(order, 4900), reference.HeaderTestDelay, "300ms")
		var originals []Reply
		for _, r := range replies {
			require.NoError(t, r.Err)
			if r.Status == http.StatusCreated && !r.Replayed() {
				originals = append(originals, r)
			}
		}
		require.Len(t, originals, 1, "exactly one attempt executes")
		conflicts, replays := 0, 0
		for _, r := range replies {
			switch {
			case r.Status == http.StatusConflict:
				conflicts++
			case r.Status == http.StatusCreated && r.Replayed():
				require.Equal(t, originals[0].Body, r.Body)
				replays++
			default:
				require.Equal(t, http.StatusCreated, r.Status, "unexpected answer %d %s", r.Status, r.Body)
			}
		}
		require.Equal(t, burst-1, conflicts+replays)
		require.Equal(t, 1, e.Count(t, "refunds", order))
		t.Logf("%d attempts: 1 executed, %d got 409, %d got the replay", burst, conflicts, replays)
	})

	t.Run("the Location of a create serves the object, to its principal only", func(t *testing.T) {
		e := Start(t, store)
		get := func(path string, headers ...string) Reply {
			req, err := http.NewRequest(http.MethodGet, e.URL+path, nil)
			require.NoError(t, err)
			for i := 0; i+1 < len(headers); i += 2 {
				req.Header.Set(headers[i], headers[i+1])
			}
			return e.Do(req)
		}
		order := Fresh("o-")
		created := e.Post(t, refunds, Fresh("k-"), RefundBody(order, 4900), "Authorization", "Bearer alice")
		require.Equal(t, http.StatusCreated, created.Status)
		loc := created.Header.Get("Location")
		require.True(t, strings.HasPrefix(loc, refunds+"/re_"), loc)

		got := get(loc, "Authorization", "Bearer alice")
		require.Equal(t, http.StatusOK, got.Status)
		require.Equal(t, "application/json", got.Header.Get("Content-Type"))
		require.Equal(t, string(created.Body), string(got.Body), "the same bytes the create answered")

		for name, r := range map[string]Reply{
			"another principal":  get(loc, "Authorization", "Bearer bob"),
			"no credentials":     get(loc),
			"an unknown id":      get(refunds+"/re_000000000000000000000000", "Authorization", "Bearer alice"),
			"the other endpoint": get("/v1/invoices/"+strings.TrimPrefix(loc, refunds+"/"), "Authorization", "Bearer alice"),
		} {
			require.Equal(t, http.StatusNotFound, r.Status, name)
			requireProblem(t, r, "not-found")
		}
		invoice := e.Post(t, "/v1/invoices", Fresh("k-"), `{"order_id":"`+order+`","amount":100}`)
		require.Equal(t, http.StatusCreated, invoice.Status)
		got = get(invoice.Header.Get("Location"))
		require.Equal(t, http.StatusOK, got.Status)
		require.Equal(t, string(invoice.Body), string(got.Body))
	})

	t.Run("healthz and ledger input", func(t *testing.T) {
		e := Start(t, store)
		resp, err := e.Client.Get(e.URL + "/healthz")
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		resp, err = e.Client.Get(e.URL + "/v1/refunds")
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	})
}

// Burst sends n identical attempts at once (released together) and returns every reply.
func Burst(t testing.TB, e *Env, n int, key, body string, headers ...string) []Reply {
	t.Helper()
	replies := make([]Reply, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			replies[i] = e.Post(t, refunds, key, body, headers...)
		})
	}
	close(start)
	wg.Wait()
	return replies
}

func requireProblem(t testing.TB, r Reply, slug string) {
	t.Helper()
	require.Equal(t, "application/problem+json", r.Header.Get("Content-Type"))
	var p idempotency.Problem
	require.NoError(t, json.Unmarshal(r.Body, &p), "body %s", r.Body)
	require.Equal(t, idempotency.ProblemBase+slug, p.Type)
	require.Equal(t, r.Status, p.Status)
	require.NotEmpty(t, p.Title)
	require.NotEmpty(t, p.Detail)
}

// rawPost writes a request by hand, so header names reach the server as written.
func rawPost(t testing.TB, baseURL, path, header, body string) (int, string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", strings.TrimPrefix(baseURL, "http://"), 10*time.Second)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(30*time.Second)))
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n%s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		path, header, len(body), body)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	var sb strings.Builder
	_, err = bufio.NewReader(resp.Body).WriteTo(&sb)
	require.NoError(t, err)
	return resp.StatusCode, sb.String()
}

// TwoPhase returns store without its one-transaction ability (idempotency.LocalStore),
// so the reference server runs the two-phase path on it.
func TwoPhase(store idempotency.Store) idempotency.Store {
	return struct{ idempotency.Store }{store}
}

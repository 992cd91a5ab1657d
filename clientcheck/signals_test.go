package clientcheck_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/clientcheck"
	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/verdict"
)

// policy is a retry loop of one refund per order whose every choice is a knob: what a
// real SDK decides by its source.
type policy struct {
	orders  int
	timeout time.Duration // per attempt; 0: none (waits out any held answer)
	backoff time.Duration // the wait before a retry when the answer asks for none
	// honourHints: wait Retry-After-Ms, else Retry-After (seconds or an HTTP date).
	honourHints bool
	// obeyShouldRetry: give up when an answer says x-should-retry: false.
	obeyShouldRetry bool
	// giveUp is the outcome reported when the attempts run out or the client gives up.
	giveUp string
	// noKey: send no key at all.
	noKey bool
}

func (p policy) client() clientcheck.ClientFunc {
	return func(ctx context.Context, env clientcheck.Env) error {
		httpClient := &http.Client{Timeout: p.timeout}
		out := clientcheck.NewOutcomeWriter(env.OutcomeFile)
		for order := 1; order <= max(p.orders, 1); order++ {
			id := fmt.Sprintf("order-%d", order)
			result := p.giveUp
		attempts:
			for attempt := 1; attempt <= 4; attempt++ {
				req, err := http.NewRequestWithContext(ctx, "POST", env.BaseURL+"/v1/refunds",
					strings.NewReader(`{"order_id":"`+id+`","amount":4900}`))
				if err != nil {
					return err
				}
				if !p.noKey {
					req.Header.Set(env.KeyHeader, "refund-"+id)
				}
				wait := p.backoff
				resp, err := httpClient.Do(req)
				if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					switch {
					case resp.StatusCode < 300:
						result = clientcheck.OutcomeOK
						break attempts
					case p.obeyShouldRetry && resp.Header.Get("X-Should-Retry") == "false":
						break attempts
					case resp.StatusCode < 500 && resp.StatusCode != 409 && resp.StatusCode != 429:
						result = clientcheck.OutcomeFailed
						break attempts
					}
					if hint, ok := hintOf(resp.Header); ok && p.honourHints {
						wait = hint
					}
				}
				select {
				case <-time.After(wait):
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			if result != "" {
				if err := out.Write(clientcheck.Outcome{Operation: id, Outcome: result}); err != nil {
					return err
				}
			}
		}
		return nil
	}
}

// hintOf reads a retry hint as openai-go does: Retry-After-Ms first, then Retry-After.
func hintOf(h http.Header) (time.Duration, bool) {
	if ms, err := strconv.ParseFloat(h.Get("Retry-After-Ms"), 64); err == nil {
		return time.Duration(ms * float64(time.Millisecond)), true
	}
	v := h.Get("Retry-After")
	if secs, err := strconv.Atoi(v); err == nil {
		return time.Duration(secs) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return time.Until(at), true
	}
	return 0, false
}

func runPolicy(t *testing.T, cfg clientcheck.Config, p policy) *clientcheck.Result {
	t.Helper()
	if cfg.Timeout == 0 {
		cfg.Timeout = 60 * time.Second
	}
	res, err := clientcheck.Run(context.Background(), cfg, p.client())
	require.NoError(t, err)
	return res
}

// A 503 that says Retry-After: 1 after the commit; an SDK that retries it at its own
// 50 ms (stripe-go reads no Retry-After) is named, with the hint and the measured wait;
// one that waits the second passes.
func TestA503sRetryAfterIsJudged(t *testing.T) {
	t.Parallel()
	cfg := clientcheck.Config{FaultSpec: "503=1", Seed: 1}
	res := runPolicy(t, cfg, policy{orders: 1, timeout: 2 * time.Second, backoff: 50 * time.Millisecond, giveUp: clientcheck.OutcomeUnknown})
	v := resultOf(t, res, clientcheck.IDRetryAfterHonoured)
	require.Equal(t, verdict.NonStrict, v.Verdict, v.Message)
	require.Contains(t, v.Evidence.Examples[0], "order-1: 503 (server_error) with Retry-After 1s at attempt 1, retried")
	require.Equal(t, 1, res.Observation.Ledger["order-1"])

	res = runPolicy(t, cfg, policy{orders: 1, timeout: 2 * time.Second, backoff: 50 * time.Millisecond, honourHints: true, giveUp: clientcheck.OutcomeUnknown})
	v = resultOf(t, res, clientcheck.IDRetryAfterHonoured)
	require.Equal(t, verdict.Pass, v.Verdict, v.Message)
	require.NoError(t, res.Err())
}

// A hint in milliseconds (Retry-After-Ms) and one as an HTTP date, carried by a rule's
// headers: the finding names the header the wait came from.
func TestRetryHintsInMillisecondsAndAsADate(t *testing.T) {
	t.Parallel()
	// The date is written when the subtest runs, not when the table is built: parallel
	// tests may hold a subtest back past it.
	for name, headers := range map[string]func() map[string]string{
		"Retry-After-Ms": func() map[string]string { return map[string]string{"Retry-After-Ms": "700"} },
		"Retry-After (HTTP date)": func() map[string]string {
			return map[string]string{"Retry-After": time.Now().Add(3 * time.Second).UTC().Format(http.TimeFormat)}
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			headers := headers()
			rules := []faultproxy.Rule{{Name: "hinted-503", Match: faultproxy.Match{Method: "POST", Path: "/v1/refunds", Attempts: &faultproxy.Range{From: 1, To: 1}},
				Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterStatus, Status: 503, Headers: headers}}}
			res := runPolicy(t, clientcheck.Config{Faults: rules}, policy{orders: 1, timeout: 2 * time.Second, backoff: 20 * time.Millisecond, giveUp: clientcheck.OutcomeUnknown})
			v := resultOf(t, res, clientcheck.IDRetryAfterHonoured)
			require.Equal(t, verdict.NonStrict, v.Verdict, v.Message)
			require.Contains(t, v.Evidence.Examples[0], "with "+name)
		})
	}
}

// 429 is a --faults kind: a rate limiter's refusal before the API, with Retry-After.
func TestA429KindIsJudgedByItsRetryAfter(t *testing.T) {
	t.Parallel()
	res := runPolicy(t, clientcheck.Config{FaultSpec: "429=1", Seed: 1}, policy{orders: 1, timeout: 2 * time.Second, backoff: 20 * time.Millisecond, giveUp: clientcheck.OutcomeUnknown})
	v := resultOf(t, res, clientcheck.IDRetryAfterHonoured)
	require.Equal(t, verdict.NonStrict, v.Verdict, v.Message)
	require.Contains(t, v.Evidence.Examples[0], "order-1: 429 (throttled) with Retry-After 1s at attempt 1")
	first := res.Attempts("order-1")[0]
	require.Equal(t, outcome.Throttled, first.Class)
	require.Equal(t, "not reached", first.Upstream, "a rate limiter refuses before the API")
}

// should-retry=false: a 503 after the commit saying x-should-retry: false (and
// Stripe-Should-Retry: false). Obeying it is the SDK's contract with the API, but the
// refund may exist: a client that obeys and reports nothing is named with the signal; one
// that reports the operation unknown passes.
func TestAClientThatObeysShouldRetryFalse(t *testing.T) {
	t.Parallel()
	cfg := clientcheck.Config{FaultSpec: "should-retry=false", Seed: 1}
	res := runPolicy(t, cfg, policy{orders: 1, timeout: 2 * time.Second, backoff: 20 * time.Millisecond, obeyShouldRetry: true})
	v := resultOf(t, res, clientcheck.IDLostResolved)
	require.Equal(t, verdict.Fail, v.Verdict, v.Message)
	require.Contains(t, v.Evidence.Examples[0], "x-should-retry: false")
	require.Len(t, res.Attempts("order-1"), 1, "it obeyed")
	require.Equal(t, "x-should-retry: false", res.Attempts("order-1")[0].NoRetry, "the attempts table shows the signal")
	require.Equal(t, 1, res.Observation.Ledger["order-1"], "the answer came after the commit")

	res = runPolicy(t, cfg, policy{orders: 1, timeout: 2 * time.Second, backoff: 20 * time.Millisecond, obeyShouldRetry: true, giveUp: clientcheck.OutcomeUnknown})
	require.NoError(t, res.Err())

	res = runPolicy(t, cfg, policy{orders: 1, timeout: 2 * time.Second, backoff: 20 * time.Millisecond, obeyShouldRetry: true, giveUp: clientcheck.OutcomeFailed})
	v = resultOf(t, res, clientcheck.IDUnknownAsFailed)
	require.Equal(t, verdict.Fail, v.Verdict, v.Message)
	require.Contains(t, v.Evidence.Examples[0], "x-should-retry: false")
}

// A client with no per-attempt timeout waits out a held answer; past client_patience the
// hold is released (so the run stays short) and the wait is a SHOULD finding. One that
// gives up inside the patience passes.
func TestAClientWithoutAnAttemptTimeout(t *testing.T) {
	t.Parallel()
	cfg := clientcheck.Config{FaultSpec: "hold", Seed: 1, ClientPatience: 400 * time.Millisecond}
	res := runPolicy(t, cfg, policy{orders: 1, backoff: 20 * time.Millisecond, giveUp: clientcheck.OutcomeUnknown})
	v := resultOf(t, res, clientcheck.IDAttemptTimeout)
	require.Equal(t, verdict.NonStrict, v.Verdict, v.Message)
	require.Contains(t, v.Evidence.Examples[0], "order-1: waited out a held answer for")
	require.Contains(t, v.Message, "no per-attempt timeout")
	require.Equal(t, 1, res.Observation.Ledger["order-1"])

	res = runPolicy(t, cfg, policy{orders: 1, timeout: 100 * time.Millisecond, backoff: 20 * time.Millisecond, giveUp: clientcheck.OutcomeUnknown})
	v = resultOf(t, res, clientcheck.IDAttemptTimeout)
	require.Equal(t, verdict.Pass, v.Verdict, v.Message)
	require.NoError(t, res.Err())
}

// Observation-level: the cap. A client may cap an hour's hint at retry_after_cap (the
// default 60 s), and waiting the whole hour is a finding only where the profile declares
// the cap.
func TestRetryAfterCap(t *testing.T) {
	t.Parallel()
	obs := func(hint, gap time.Duration) clientcheck.Observation {
		o := goodObservation()
		o.Delivered = map[uint64]clientcheck.Delivered{1: {Entity: "order-1", Class: outcome.ServerError, RetryAfter: hint, RetryHint: "Retry-After", Start: t0, Sent: t0, End: t0}}
		o.Attempts[1].Time = t0.Add(gap)
		return o
	}
	judge := func(o clientcheck.Observation) verdict.Result { return verdicts(o)[clientcheck.IDRetryAfterHonoured] }

	require.Equal(t, verdict.NonStrict, judge(obs(time.Hour, 10*time.Second)).Verdict, "an hour's hint retried after 10s: neither the hint nor the default cap")
	require.Equal(t, verdict.Pass, judge(obs(time.Hour, 61*time.Second)).Verdict, "capped at the default 60s")
	require.Equal(t, verdict.Pass, judge(obs(time.Hour, 2*time.Hour)).Verdict, "the default cap is no bound")

	declared := obs(time.Hour, time.Hour)
	declared.RetryAfterCap, declared.RetryAfterCapDeclared = 2*time.Second, true
	v := judge(declared)
	require.Equal(t, verdict.NonStrict, v.Verdict, v.Message)
	require.Contains(t, v.Evidence.Examples[0], "longer than retry_after_cap 2s")
	declared.Attempts[1].Time = t0.Add(2 * time.Second)
	require.Equal(t, verdict.Pass, judge(declared).Verdict)

	// A 409's hint stays client/409-hammered's: one finding per cause.
	o := obs(time.Second, 10*time.Millisecond)
	o.Delivered[1] = clientcheck.Delivered{Entity: "order-1", Class: outcome.InFlight, RetryAfter: time.Second, Start: t0, Sent: t0, End: t0}
	require.Equal(t, verdict.NA, judge(o).Verdict)
	require.Equal(t, verdict.Fail, verdicts(o)[clientcheck.ID409Hammered].Verdict)
}

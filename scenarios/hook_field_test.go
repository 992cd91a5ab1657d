package scenarios_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/verdict"
)

// fieldHookProfile is the fake's profile with its hooks in the field form: members of
// the JSON body.
func fieldHookProfile(t *testing.T, base string) *profile.Profile {
	t.Helper()
	doc := strings.Replace(fakeProfileDoc(base), "slow_operation: {header: X-Test-Delay, value: 400ms}\n",
		"slow_operation: {field: test_delay, value: 400ms}\nfail_operation: {field: test_fail, value: \"503\"}\n", 1)
	p, err := profile.Parse("fake.yaml", []byte(doc))
	require.NoError(t, err)
	return p
}

// A hook in the field form is a member of the body the target receives, on the hooked
// request only: the hold and the failure act as they do as headers, the slow and the
// fail hook travel together on one request, and the hook proof proves them first.
func TestFieldHooksReachTheTargetsJSON(t *testing.T) {
	t.Parallel()
	f := &fakeRefunds{bodyHooks: true}
	p := fieldHookProfile(t, startFake(t, f))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := scenarios.Run(ctx, scenarios.RunConfig{Profiles: []*profile.Profile{p}, Only: []string{"race/in-flight-409", "race/in-flight-original-fails"}, Seed: 1})
	require.NoError(t, err)
	require.Len(t, rep.Results, 2)
	r := result(t, rep, "race/in-flight-409")
	require.Equal(t, verdict.Pass, r.Verdict, r.Message)
	require.NotEqual(t, verdict.NA, result(t, rep, "race/in-flight-original-fails").Verdict, "two fields go on one request")

	var delays, fails, both, plain int
	for _, req := range f.requests() {
		delay, fail := gjson.Get(req.Body, "test_delay"), gjson.Get(req.Body, "test_fail")
		require.Empty(t, req.Header.Get("X-Test-Delay"), "the field form sends no header")
		switch {
		case delay.Exists() && fail.Exists():
			both++
			require.Equal(t, "503", fail.String())
		case delay.Exists():
			delays++
		case fail.Exists():
			fails++
		default:
			plain++
		}
		if delay.Exists() {
			require.Equal(t, gjson.String, delay.Type, req.Body)
			require.Equal(t, "400ms", delay.Str, req.Body)
		}
		if fail.Exists() {
			require.Equal(t, "503", fail.Str, req.Body)
		}
		require.Equal(t, "4900", gjson.Get(req.Body, "amount").Raw, "the body is the operation's, plus the hook")
	}
	// The proof: slow_operation once, fail_operation once, each then sent plain and
	// hooked under one key (the field form changes the body); the scenarios: each
	// original held, one of them held and failed.
	require.GreaterOrEqual(t, delays, 3, "the proof's two held requests and in-flight-409's original")
	require.GreaterOrEqual(t, fails, 2, "the proof's two failed requests")
	require.Equal(t, 1, both, "in-flight-original-fails' original, held and failed")
	require.Positive(t, plain, "the repeats are sent plain")
}

// A target that keeps the hook's member in its fingerprint takes the hooked request for
// another payload: the proof sends one key plain, then hooked, sees it refused as a
// changed request while a plain repeat replays, and the scenarios that use the hook are
// UNKNOWN, saying so, never PASS.
func TestFieldHooksTheTargetFingerprintsAreAnotherOperation(t *testing.T) {
	t.Parallel()
	p := fieldHookProfile(t, startFake(t, &fakeRefunds{bodyHooks: true, hooksFingerprinted: true}))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := scenarios.Run(ctx, scenarios.RunConfig{Profiles: []*profile.Profile{p}, Only: []string{"race/in-flight-409", "race/concurrent-pair"}, Seed: 1})
	require.NoError(t, err)
	require.Len(t, rep.Results, 2)
	for _, r := range rep.Results {
		require.Equal(t, verdict.Unknown, r.Verdict, "%s: %s", r.ScenarioID, r.Message)
		require.Contains(t, r.Message, "its field form puts test_delay into the request's body, which the target takes for another operation than its POST /v1/refunds without it", r.ScenarioID)
		require.Contains(t, r.Message, "refused as a changed request (422", r.ScenarioID)
	}
}

// A target that ignores the field (it knows no such hook) is not held by it: the proof
// says the hook did not act and stops the run, or leaves its scenarios N/A; never a PASS
// leaning on a hold that did not happen.
func TestAFieldHookTheTargetIgnoresDidNotAct(t *testing.T) {
	t.Parallel()
	p := fieldHookProfile(t, startFake(t, &fakeRefunds{noFingerprint: true}))
	only := []string{"race/in-flight-409", "replay/sequential"}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := scenarios.Run(ctx, scenarios.RunConfig{Profiles: []*profile.Profile{p}, Only: only, Seed: 1})
	var pe *scenarios.PreflightError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "slow_operation", pe.Field, pe.Msg)
	require.Contains(t, pe.Msg, "slow_operation did not act")
	require.Contains(t, pe.Msg, "slow_operation declares a hold of 400ms")

	rep, err := scenarios.Run(ctx, scenarios.RunConfig{Profiles: []*profile.Profile{p}, Only: only, Seed: 1, UnprovenHooks: scenarios.UnprovenHooksNA})
	require.NoError(t, err)
	r := result(t, rep, "race/in-flight-409")
	require.Equal(t, verdict.NA, r.Verdict, r.Message)
	require.Contains(t, r.Message, "needs slow_operation to act, and it did not in the preflight")
	require.Equal(t, verdict.Pass, result(t, rep, "replay/sequential").Verdict, "the rest runs")
}

// A test app that reads its hooks as JSON numbers gets numbers with value_json: the hold
// in milliseconds from {{.HoldMs}}, the status as 503. Without value_json the same
// fields carry strings, which that app ignores, and the hook proof says the hold did
// not act instead of a scenario leaning on it.
func TestFieldHooksWithJSONValues(t *testing.T) {
	t.Parallel()
	profileFor := func(base string, typed bool) *profile.Profile {
		hooks := "slow_operation: {field: test_delay_ms, value: \"{{.HoldMs}}\", hold: 400ms, value_json: true}\nfail_operation: {field: test_fail, value: \"503\", value_json: true}\n"
		if !typed {
			hooks = strings.ReplaceAll(hooks, ", value_json: true", "")
		}
		doc := strings.Replace(fakeProfileDoc(base), "slow_operation: {header: X-Test-Delay, value: 400ms}\n", hooks, 1)
		p, err := profile.Parse("fake.yaml", []byte(doc))
		require.NoError(t, err)
		return p
	}
	f := &fakeRefunds{bodyHooks: true}
	base := startFake(t, f)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := scenarios.Run(ctx, scenarios.RunConfig{Profiles: []*profile.Profile{profileFor(base, true)}, Only: []string{"race/in-flight-409", "race/in-flight-original-fails"}, Seed: 1})
	require.NoError(t, err)
	r := result(t, rep, "race/in-flight-409")
	require.Equal(t, verdict.Pass, r.Verdict, r.Message)
	r = result(t, rep, "race/in-flight-original-fails")
	require.NotEqual(t, verdict.NA, r.Verdict, r.Message)
	held := 0
	for _, req := range f.requests() {
		if d := gjson.Get(req.Body, "test_delay_ms"); d.Exists() {
			require.Equal(t, gjson.Number, d.Type, req.Body)
			require.Equal(t, int64(400), d.Int(), req.Body)
			held++
		}
		if s := gjson.Get(req.Body, "test_fail"); s.Exists() {
			require.Equal(t, gjson.Number, s.Type, req.Body)
			require.Equal(t, int64(503), s.Int(), req.Body)
		}
	}
	require.Positive(t, held)

	_, err = scenarios.Run(ctx, scenarios.RunConfig{Profiles: []*profile.Profile{profileFor(startFake(t, &fakeRefunds{bodyHooks: true}), false)}, Only: []string{"race/in-flight-409"}, Seed: 1})
	require.ErrorContains(t, err, "slow_operation")
}

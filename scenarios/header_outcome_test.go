package scenarios_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/verdict"
)

// headerToldRules tell the fake's two 409s apart by their Idempotency-Outcome header.
const headerToldRules = `outcomes:
  in_flight: {status: 409, header: {name: Idempotency-Outcome, equals: in_progress}}
  mismatch: {status: 409, header: {name: Idempotency-Outcome, equals: conflict}}
`

// A middleware that answers both a repeat in flight and a changed payload with 409 and
// an empty body, told apart only by a header, is described honestly (mismatch: 409) and
// judged right: the refusals are what they are, no key is "stuck".
func TestRefusalsToldApartByAHeaderAreJudged(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	base := startFake(t, &fakeRefunds{outcomeHeader: true})
	// A hold of 1 s, not 400 ms: the in-flight repeat must reach the target well inside
	// it however loaded the machine (this test is about telling the refusals apart).
	doc := strings.NewReplacer("mismatch: 422", "mismatch: 409", "value: 400ms", "value: 1s").Replace(fakeProfileDoc(base)) + headerToldRules
	p, err := profile.Parse("fake.yaml", []byte(doc))
	require.NoError(t, err, "the honest mismatch: 409 loads when header rules tell it from in_flight")
	only := []string{"fingerprint/mismatch", "fingerprint/mismatch-repeat", "fingerprint/original-intact", "fingerprint/each-member",
		"race/in-flight-409", "race/in-flight-other-payload", "race/concurrent-pair", "race/in-flight-not-fabricated"}
	rep, err := scenarios.Run(ctx, scenarios.RunConfig{Profiles: []*profile.Profile{p}, Only: only, Seed: 7})
	require.NoError(t, err)
	require.Len(t, rep.Results, len(only))
	for _, r := range rep.Results {
		require.Equal(t, verdict.Pass, r.Verdict, "%s: %s", r.ScenarioID, r.Message)
	}
	mismatch := result(t, rep, "fingerprint/mismatch")
	var seen bool
	for _, op := range mismatch.Evidence.Record.History {
		if op.Type != verdict.OpInvoke && op.Status == 409 {
			require.Equal(t, "conflict", op.Headers["Idempotency-Outcome"], "the header the rules read is kept in the evidence")
			seen = true
		}
	}
	require.True(t, seen)

	// The header decides: the same target described with the two values swapped fails.
	swapped := strings.NewReplacer("equals: in_progress", "equals: conflict", "equals: conflict", "equals: in_progress").Replace(doc)
	p, err = profile.Parse("swapped.yaml", []byte(swapped))
	require.NoError(t, err)
	rep, err = scenarios.Run(ctx, scenarios.RunConfig{Profiles: []*profile.Profile{p}, Only: []string{"fingerprint/mismatch"}, Seed: 7})
	require.NoError(t, err)
	require.Equal(t, verdict.Fail, verdicts(rep)["fingerprint/mismatch"], rep.Results[0].Message)
}

package clientcheck_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/clientcheck"
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/profile"
)

// headerToldProfile is toolProfile for an API that refuses both a repeat in flight and a
// changed payload with 409, told apart only by its Idempotency-Outcome header.
var headerToldProfile = strings.Replace(toolProfile, "expect: { in_flight: 409, mismatch: 422, missing_key: optional }", `expect: { in_flight: 409, mismatch: 409, missing_key: optional }
outcomes:
  in_flight: {status: 409, header: {name: Idempotency-Outcome, equals: in_progress}}
  mismatch: {status: 409, header: {name: Idempotency-Outcome, equals: conflict}}`, 1)

// The 409 and 422 kinds answer as such an API does: the status and the header its rules
// read, so the client meets refusals the profile recognises as what they stand for.
func TestThe409And422KindsCarryTheHeaderTheRulesRead(t *testing.T) {
	p, err := profile.Parse("tool-api.yaml", []byte(fmt.Sprintf(headerToldProfile, toolServer(t).URL)))
	require.NoError(t, err)
	res, err := clientcheck.Run(context.Background(), clientcheck.Config{Profile: p, FaultSpec: "409,422", Seed: 1, Timeout: 30 * time.Second},
		toolClient(func(order string, _ int) string { return "call-" + order }))
	require.NoError(t, err)
	require.Equal(t, map[outcome.Class]int{outcome.InFlight: 1, outcome.Mismatch: 1}, injectedClasses(t, res, "409"))

	// A rule the proxy cannot build an answer for (a pattern, not a value) is refused
	// before the run, saying why.
	doc := strings.Replace(headerToldProfile, "{name: Idempotency-Outcome, equals: conflict}", "{name: Idempotency-Outcome, matches: '^confl'}", 1)
	p, err = profile.Parse("tool-api.yaml", []byte(fmt.Sprintf(doc, toolServer(t).URL)))
	require.NoError(t, err)
	_, err = clientcheck.Run(context.Background(), clientcheck.Config{Profile: p, FaultSpec: "422", Seed: 1, Timeout: 30 * time.Second},
		toolClient(func(order string, _ int) string { return "call-" + order }))
	require.ErrorContains(t, err, `fault "422"`)
	require.ErrorContains(t, err, "header Idempotency-Outcome ~ /^confl/")
}

// injectedClasses counts the classes of the orders' first attempts, each of which the
// proxy answered with a before-status fault delivered as status.
func injectedClasses(t *testing.T, res *clientcheck.Result, status string) map[outcome.Class]int {
	t.Helper()
	classes := map[outcome.Class]int{}
	for _, order := range []string{"o-1", "o-2"} {
		attempts := res.Attempts(order)
		require.NotEmpty(t, attempts)
		require.Equal(t, "before-status", attempts[0].Fault, order)
		require.Equal(t, status, attempts[0].Delivered, order)
		classes[attempts[0].Class]++
	}
	return classes
}

package outcome_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/outcome"
)

func TestStatusesClassify(t *testing.T) {
	s := outcome.Statuses{InFlight: 409, Mismatch: 422, MissingKey: 400, Business: 402, Validation: 400}
	for status, want := range map[int]outcome.Class{
		200: outcome.Success, 201: outcome.Success, 409: outcome.InFlight, 422: outcome.Mismatch,
		400: outcome.MissingKey, 402: outcome.BusinessError, 404: outcome.ClientError,
		500: outcome.ServerError, 503: outcome.ServerError, 302: outcome.ClientError,
		429: outcome.Throttled,
	} {
		require.Equal(t, want, s.Classify(outcome.Answer{Status: status}), "status %d", status)
	}
	require.True(t, outcome.InFlight.Refusal())
	require.False(t, outcome.BusinessError.Refusal())
	require.False(t, outcome.Info.Determinate())
	require.False(t, outcome.Throttled.Determinate(), "a rate limit's refusal says nothing of the operation")
	require.False(t, outcome.Throttled.Refusal())
	// A profile that declares 429 for a refusal of its own (in flight) gets that class.
	require.Equal(t, outcome.InFlight, outcome.Statuses{InFlight: 429}.Classify(outcome.Answer{Status: 429}))
	require.True(t, outcome.Mismatch.Valid())
	require.False(t, outcome.Class("nope").Valid())
}

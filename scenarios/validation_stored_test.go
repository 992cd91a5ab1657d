package scenarios_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/verdict"
)

// A middleware that fingerprints the body and stores validation errors: the corrected
// body with the same key is another request than the stored one, and is refused as a
// mismatch (422), nothing executed. Under stores_validation_errors: true that is the
// contract working, and it is told apart from the stored error replayed.
func TestStoredValidationErrorRefusesTheCorrectedBodyAsAMismatch(t *testing.T) {
	t.Parallel()
	p := fakeProfile(t, startFake(t, &fakeRefunds{validates: true}))
	p.Validation = &profile.Example{Body: `{"order_id": "{{.Entity}}", "amount": -5}`, Status: 400}
	stored := true
	p.Expect.StoresValidationErrors = &stored

	r := runOn(t, p, "storage/validation-not-stored")["storage/validation-not-stored"]
	require.Equal(t, verdict.Pass, r.Verdict, r.Message)
	require.Contains(t, r.Message, "refused as a changed request")
	require.Contains(t, r.Message, "as declared")
	require.Equal(t, 0, r.Evidence.Record.Ledger[verdict.LedgerOperation])

	notStored := false
	p.Expect.StoresValidationErrors = &notStored
	r = runOn(t, p, "storage/validation-not-stored")["storage/validation-not-stored"]
	require.Equal(t, verdict.Fail, r.Verdict, "declared not stored, but the key kept the invalid request: %s", r.Message)
	require.Contains(t, r.Message, "refused as a changed request")

	p.Expect.StoresValidationErrors = nil
	r = runOn(t, p, "storage/validation-not-stored")["storage/validation-not-stored"]
	require.Equal(t, verdict.Info, r.Verdict, r.Message)
	require.Contains(t, r.Message, "refused as a changed request")
}

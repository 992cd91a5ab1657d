package profile_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/profile"
)

// expect.fingerprint_ignores must name members of operation.body, so a typo does not
// silently leave a member changed and judged.
func TestFingerprintIgnoresMustNameAMember(t *testing.T) {
	doc := strings.Replace(minimalProfile, `body: '{"order_id": "{{.Entity}}", "amount": 4900}'`,
		`body: '{"order_id": "{{.Entity}}", "amount": 1, "meta": {"trace": "t"}}'`, 1) +
		"  fingerprint_ignores: [meta.trace, meta.nope, \"\"]\n"
	_, err := profile.Parse("x.yaml", []byte(doc))
	require.ErrorContains(t, err, `expect.fingerprint_ignores[1]: "meta.nope" is not a member of operation.body`)
	require.ErrorContains(t, err, `expect.fingerprint_ignores[2]: "" is not a member of operation.body`)
	require.NotContains(t, err.Error(), "fingerprint_ignores[0]")

	form := strings.Replace(minimalProfile, `body: '{"order_id": "{{.Entity}}", "amount": 4900}'`,
		`body: 'charge={{.Entity}}&amount=100&reason=requested_by_customer'`, 1) +
		"  fingerprint_ignores: [reason, nope]\n"
	_, err = profile.Parse("x.yaml", []byte(form))
	require.ErrorContains(t, err, `expect.fingerprint_ignores[1]: "nope" is not a field of operation.body (a form)`)
	require.NotContains(t, err.Error(), "fingerprint_ignores[0]")
}

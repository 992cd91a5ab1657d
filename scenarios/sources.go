package scenarios

// Sources cited by the catalogue. The draft's wording is SHOULD throughout; idemproof
// lifts the safety invariants (one effect, faithful replay, no leak) above any profile,
// as the README's "Verdicts" paragraph and docs/scenarios.md state.
const (
	srcDraft            = "draft-07" // draft-ietf-httpapi-idempotency-key-header-07
	srcDraftSyntax      = srcDraft + " §2.1 (Syntax: an RFC 8941 sf-string)"
	srcDraftUniqueness  = srcDraft + " §2.2 (Uniqueness of Idempotency Key)"
	srcDraftExpiry      = srcDraft + " §2.3 (Idempotency Key Validity and Expiry)"
	srcDraftFingerprint = srcDraft + " §2.4 (Idempotency Fingerprint)"
	srcDraftEnforced    = srcDraft + " §2.6 (Idempotency Enforced Scenarios)"
	srcDraftErrors      = srcDraft + " §2.7 (Error Scenarios)"
	srcStripe           = "Stripe, Idempotent requests"
	srcBrandur          = "brandur, Stripe-like idempotency keys in Postgres"
	srcRFC9110          = "RFC 9110 §5.1 (field names are case-insensitive)"
	srcSeed             = "idemproof safety invariants (README, Verdicts)"
)

// and joins sources.
func and(a, b string) string { return a + "; " + b }

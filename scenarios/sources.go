package scenarios

// Sources cited by the catalogue. The draft's wording is SHOULD throughout; DESIGN.md
// lifts the safety invariants (one effect, faithful replay, no leak) above any profile.
const (
	srcDraft            = "draft-ietf-httpapi-idempotency-key-header-07"
	srcDraftSyntax      = srcDraft + " §2.1 (Syntax: an RFC 8941 sf-string)"
	srcDraftUniqueness  = srcDraft + " §2.2 (Uniqueness of Idempotency Key)"
	srcDraftExpiry      = srcDraft + " §2.3 (Idempotency Key Validity and Expiry)"
	srcDraftFingerprint = srcDraft + " §2.4 (Idempotency Fingerprint)"
	srcDraftEnforced    = srcDraft + " §2.6 (Idempotency Enforced Scenarios)"
	srcDraftErrors      = srcDraft + " §2.7 (Error Scenarios)"
	srcStripe           = "Stripe API reference, Idempotent requests"
	srcBrandur          = "brandur.org, Implementing Stripe-like Idempotency Keys in Postgres"
	srcRFC9110          = "RFC 9110 §5.1 (field names are case-insensitive)"
	srcSeed             = "idemproof seed rules (DESIGN.md: safety invariants)"
)

// and joins sources.
func and(a, b string) string { return a + "; " + b }

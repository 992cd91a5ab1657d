package profile_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/profile"
)

const minimalProfile = `name: refunds
base_url: http://127.0.0.1:9000
operation:
  method: POST
  path: /v1/refunds
  body: '{"order_id": "{{.Entity}}", "amount": 4900}'
  altered_body: '{"order_id": "{{.Entity}}", "amount": 5000}'
side_effects:
  path: /v1/refunds?order_id={{.Entity}}
  count: data.#
expect:
  in_flight: 409
  mismatch: 422
  missing_key: "400"
`

func TestReferenceProfileIsCompleteAndValid(t *testing.T) {
	t.Setenv("IDEMPROOF_BASE_URL", "")
	p, err := profile.Builtin("reference")
	require.NoError(t, err)
	require.NoError(t, p.Validate())
	require.Equal(t, "http://127.0.0.1:8080", p.BaseURL)
	require.Equal(t, "Idempotency-Key", p.KeyHeader)
	require.Equal(t, 5*time.Second, p.Retention.Std())
	require.Equal(t, 600*time.Millisecond, p.LockTimeout.Std())
	require.Empty(t, p.Missing(profile.CapLockTimeout), "the retention outlasts the lock timeout plus the takeover margin")
	require.Equal(t, 2*time.Second, p.ClientTimeout.Std())
	require.Equal(t, 422, p.Expect.Mismatch)
	require.Equal(t, []string{"Content-Type", "Location"}, p.Expect.ReplayHeaders)
	require.NotNil(t, p.Expect.StoresBusinessErrors)
	require.True(t, *p.Expect.StoresBusinessErrors)
	require.Len(t, p.Principals, 2)
	require.Equal(t, 402, p.Business.Status)
	require.Equal(t, "/v1/invoices", p.Other.Path)
	require.Equal(t, "count", p.Other.SideEffects.Count)
	require.Equal(t, []string{"acp", "ietf-draft-07", "mcp-refunds", "mcp-refunds-stdio", "mcp-sep-3182", "reference", "stripe"}, profile.BuiltinNames())
}

func TestReferenceProfileBaseURLFromEnvironment(t *testing.T) {
	t.Setenv("IDEMPROOF_BASE_URL", "http://127.0.0.1:18080")
	p, err := profile.Builtin("reference")
	require.NoError(t, err)
	require.Equal(t, "http://127.0.0.1:18080", p.BaseURL)
}

func TestParseProfileAppliesDefaults(t *testing.T) {
	p, err := profile.Parse("refunds.yaml", []byte(minimalProfile))
	require.NoError(t, err)
	require.Equal(t, "Idempotency-Key", p.KeyHeader)
	require.Equal(t, 2*time.Second, p.ClientTimeout.Std())
	require.Equal(t, "GET", p.SideEffects.Method)
}

func TestParseProfileErrorNamesFieldAndLine(t *testing.T) {
	bad := minimalProfile[:len(minimalProfile)-len("  mismatch: 422\n  missing_key: \"400\"\n")] + "  mismatch: 200\n  missing_key: \"400\"\n"
	_, err := profile.Parse("refunds.yaml", []byte(bad))
	require.EqualError(t, err, "profile refunds.yaml: line 13: expect.mismatch: must be a 4xx status (422 in draft-07, 400 at Stripe), got 200")
}

func TestParseProfileReportsEveryProblem(t *testing.T) {
	_, err := profile.Parse("x.yaml", []byte("name: x\nkey_header: A\nkey_field: b\nexpect: {in_flight: 409, mismatch: 422, missing_key: maybe}\n"))
	require.Error(t, err)
	msg := err.Error()
	require.Contains(t, msg, "profile x.yaml: base_url: required")
	require.Contains(t, msg, "line 3: key_field: set key_header or key_field, not both")
	require.Contains(t, msg, "operation.path: must start with /")
	require.Contains(t, msg, "side_effects.count: required")
	require.Contains(t, msg, "line 4: expect.missing_key: must be a 4xx status or \"optional\", got \"maybe\"")
}

func TestParseProfileRejectsUnknownField(t *testing.T) {
	_, err := profile.Parse("x.yaml", []byte(minimalProfile+"retenion: 1s\n"))
	require.ErrorContains(t, err, "profile x.yaml: line 15: retenion: unknown field")
}

func TestParseProfileChecksTemplatesAtLoadTime(t *testing.T) {
	bad := []byte(minimalProfile + "business_error: {body: '{\"order_id\": \"{{.Entitty}}\"}', status: 402}\n")
	_, err := profile.Parse("x.yaml", bad)
	require.ErrorContains(t, err, "line 15: business_error.body: template:")
	require.ErrorContains(t, err, "only {{.Entity}} is available")
}

func TestParseProfileBadDurationNamesLine(t *testing.T) {
	_, err := profile.Parse("x.yaml", []byte(minimalProfile+"retention: soon\n"))
	require.EqualError(t, err, `profile x.yaml: line 15: retention: must be a duration such as "2s" or "400ms", got "soon"`)
}

func TestParseProfileExpandsEnvironment(t *testing.T) {
	t.Setenv("IDEMPROOF_TEST_TOKEN", "s3cret")
	doc := minimalProfile + "principals:\n  - {Authorization: \"Bearer ${IDEMPROOF_TEST_TOKEN}\"}\n  - {Authorization: \"Bearer ${IDEMPROOF_TEST_OTHER:-fallback}\"}\n"
	p, err := profile.Parse("x.yaml", []byte(doc))
	require.NoError(t, err)
	require.Equal(t, "Bearer s3cret", p.Principals[0]["Authorization"])
	require.Equal(t, "Bearer fallback", p.Principals[1]["Authorization"])

	_, err = profile.Parse("x.yaml", []byte(minimalProfile+"principals: [{Authorization: \"Bearer ${IDEMPROOF_UNSET_VAR}\"}]\n"))
	require.EqualError(t, err, "profile x.yaml: line 15: principals[0].Authorization: environment variable IDEMPROOF_UNSET_VAR is not set (export it, or write ${IDEMPROOF_UNSET_VAR:-default})")
}

func TestExtendsPresetThenOverride(t *testing.T) {
	doc := `extends: stripe
name: shop
base_url: http://127.0.0.1:9000
operation: {path: /charges, body: '{"order": "{{.Entity}}", "amount": 100}'}
side_effects: {path: '/charges?order={{.Entity}}', count: total}
expect: {mismatch: 422}
`
	p, err := profile.Parse("shop.yaml", []byte(doc))
	require.NoError(t, err)
	require.Equal(t, "shop", p.Name)
	require.Equal(t, 422, p.Expect.Mismatch, "the profile overrides the preset")
	require.Equal(t, 409, p.Expect.InFlight, "the preset fills what the profile leaves out")
	require.Equal(t, "optional", p.Expect.MissingKey)
	require.Equal(t, "Idempotent-Replayed", p.Expect.ReplayHeader)
	require.Equal(t, 24*time.Hour, p.Retention.Std())
	require.Equal(t, "POST", p.Operation.Method)
}

func TestExtendsFileRelativeToProfile(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "base.yaml"), []byte(minimalProfile), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "child.yaml"), []byte("extends: ./base.yaml\nname: child\nretention: 3s\n"), 0o600))
	p, err := profile.Load(filepath.Join(dir, "child.yaml"))
	require.NoError(t, err)
	require.Equal(t, "child", p.Name)
	require.Equal(t, 3*time.Second, p.Retention.Std())
	require.Equal(t, "/v1/refunds", p.Operation.Path)
}

func TestExtendsUnknownPreset(t *testing.T) {
	_, err := profile.Parse("x.yaml", []byte("extends: paypal\n"))
	require.EqualError(t, err, `profile x.yaml: line 1: extends: unknown built-in profile "paypal" (have acp, ietf-draft-07, mcp-refunds, mcp-refunds-stdio, mcp-sep-3182, reference, stripe; or give a file path)`)
}

func TestKeyFieldProfileNeedsJSONBody(t *testing.T) {
	doc := `name: tools
base_url: http://127.0.0.1:9000
key_field: params.arguments.idempotency_key
operation: {path: /mcp, body: 'not json {{.Entity}}'}
side_effects: {path: '/ledger?e={{.Entity}}', count: count}
expect: {in_flight: 409, mismatch: 422, missing_key: "400"}
`
	_, err := profile.Parse("tools.yaml", []byte(doc))
	require.EqualError(t, err, "profile tools.yaml: line 4: operation.body: must be a JSON object when key_field carries the key in the body")
}

func TestValidateWithoutLines(t *testing.T) {
	p, err := profile.Parse("x.yaml", []byte(minimalProfile))
	require.NoError(t, err)
	p.Expect.InFlight = 200
	require.EqualError(t, p.Validate(), `expect.in_flight: must be a 4xx status (409 in draft-07 and Stripe) or "wait", got 200`)
}

func TestMissingCapabilitiesMakeScenariosNA(t *testing.T) {
	p, err := profile.Parse("x.yaml", []byte(minimalProfile))
	require.NoError(t, err)
	require.Equal(t, "slow_operation not declared", p.Missing(profile.CapSlow))
	require.Equal(t, "", p.Missing(profile.CapIntegerBody))
	p.Retention = profile.Duration(24 * time.Hour)
	require.Contains(t, p.Missing(profile.CapRetention), "longer than")
}

func TestParseProfileReportsBadScalarsWithEverythingElse(t *testing.T) {
	doc := minimalProfile[:len(minimalProfile)-len("  mismatch: 422\n  missing_key: \"400\"\n")] + "  mismatch: often\n  missing_key: \"400\"\nlock_timeout: 1 second\ncolour: blue\n"
	_, err := profile.Parse("x.yaml", []byte(doc))
	require.EqualError(t, err, `profile x.yaml: line 13: expect.mismatch: must be an integer (an HTTP status), got "often"
profile x.yaml: line 15: lock_timeout: must be a duration such as "2s" or "400ms", got "1 second"
profile x.yaml: line 16: colour: unknown field (known: base_url, business_error, client_patience, client_timeout, crash, downstream, entity, entity_setup, expect, fail_operation, key_field, key_header, keyed_methods, lock_timeout, mcp, name, operation, other_operation, outcomes, principals, proxy, retention, retry_after_cap, side_effects, slow_operation, store, tls, transport, validation_error)`)
}

func TestLockTimeoutThatOutlivesTheRetentionIsNA(t *testing.T) {
	p, err := profile.Parse("x.yaml", []byte(minimalProfile+"retention: 1s\nlock_timeout: 1s\n"))
	require.NoError(t, err)
	require.Equal(t, "retention 1s does not outlast lock_timeout 1s plus the takeover margin: a wedged key would expire before it could be seen", p.Missing(profile.CapLockTimeout))
}

func TestInFlightAcceptsAStatusOrWait(t *testing.T) {
	wait := strings.Replace(minimalProfile, "in_flight: 409", "in_flight: wait", 1)
	p, err := profile.Parse("x.yaml", []byte(wait))
	require.NoError(t, err)
	require.True(t, p.Expect.InFlightWait)
	require.Zero(t, p.Expect.InFlight)
	require.NoError(t, p.Validate())

	_, err = profile.Parse("x.yaml", []byte(strings.Replace(minimalProfile, "in_flight: 409", "in_flight: soon", 1)))
	require.EqualError(t, err, `profile x.yaml: line 12: expect.in_flight: must be a 4xx status (409 in draft-07 and Stripe) or "wait" (a repeat waits and gets the committed response), got "soon"`)

	p.Expect.InFlight = 409
	require.EqualError(t, p.Validate(), `expect.in_flight: declares both a status (409) and "wait": a repeat is either refused or made to wait`)
}

func TestDeclaredStoragePoliciesParse(t *testing.T) {
	doc := strings.Replace(minimalProfile, "  missing_key: \"400\"\n", "  missing_key: \"400\"\n  stores_validation_errors: false\n  stores_5xx: true\n  unique_field: data.id\n", 1)
	p, err := profile.Parse("x.yaml", []byte(doc))
	require.NoError(t, err)
	require.NotNil(t, p.Expect.StoresValidationErrors)
	require.False(t, *p.Expect.StoresValidationErrors)
	require.NotNil(t, p.Expect.Stores5xx)
	require.True(t, *p.Expect.Stores5xx)
	require.Equal(t, "data.id", p.Expect.UniqueField)

	_, err = profile.Parse("x.yaml", []byte(strings.Replace(doc, "unique_field: data.id", "unique_field: data..id", 1)))
	require.EqualError(t, err, `profile x.yaml: line 17: expect.unique_field: must be a JSON path to a value minted per execution, such as id or data.decline_id, got "data..id"`)

	_, err = profile.Parse("x.yaml", []byte(strings.Replace(doc, "stores_5xx: true", "stores_5xx: sometimes", 1)))
	require.EqualError(t, err, `profile x.yaml: line 16: expect.stores_5xx: must be true or false, got "sometimes"`)
}

func TestPresetsDeclareTheirPolicies(t *testing.T) {
	t.Setenv("IDEMPROOF_BASE_URL", "")
	ref, err := profile.Builtin("reference")
	require.NoError(t, err)
	require.False(t, *ref.Expect.StoresValidationErrors)
	require.False(t, *ref.Expect.Stores5xx)
	require.Equal(t, "id", ref.Expect.UniqueField)
	stripe, err := profile.Builtin("stripe")
	require.NoError(t, err)
	require.False(t, *stripe.Expect.StoresValidationErrors, "Stripe saves no result when validation fails")
	require.True(t, *stripe.Expect.Stores5xx, "Stripe v1 replays 500s once execution began")
	draft, err := profile.Builtin("ietf-draft-07")
	require.NoError(t, err)
	require.Nil(t, draft.Expect.StoresValidationErrors, "the draft is silent")
	require.Nil(t, draft.Expect.Stores5xx)
}

// A profile path that names a device or a huge file is an error at once, not a read that
// never ends or fills memory.
func TestProfileFileMustBeASmallRegularFile(t *testing.T) {
	dir := t.TempDir()
	_, err := profile.Load("/dev/zero")
	require.ErrorContains(t, err, "not a regular file")

	ext := filepath.Join(dir, "extends-device.yaml")
	require.NoError(t, os.WriteFile(ext, []byte("extends: /dev/zero\nname: x\n"), 0o644))
	_, err = profile.Load(ext)
	require.ErrorContains(t, err, "extends: /dev/zero is not a regular file")

	big := filepath.Join(dir, "big.yaml")
	require.NoError(t, os.WriteFile(big, bytes.Repeat([]byte("# a comment line\n"), 70000), 0o644))
	_, err = profile.Load(big)
	require.ErrorContains(t, err, "too large for a profile")
}

// One status for in flight and mismatch cannot be told apart without rules on the body.
func TestInFlightAndMismatchNeedTellingApart(t *testing.T) {
	doc := `name: same
base_url: http://127.0.0.1:9000
operation: {path: /charges, body: '{"order": "{{.Entity}}", "amount": 100}'}
side_effects: {path: '/charges?order={{.Entity}}', count: total}
expect: {in_flight: 409, mismatch: 409, missing_key: "400"}
`
	_, err := profile.Parse("same.yaml", []byte(doc))
	require.ErrorContains(t, err, "expect.mismatch: is 409, as expect.in_flight is")
	p, err := profile.Parse("same.yaml", []byte(doc+"outcomes:\n  in_flight: {status: 409, json: {path: error.code, equals: key_in_use}}\n"))
	require.NoError(t, err)
	cl := p.Classifier()
	require.Equal(t, outcome.InFlight, cl.Classify(outcome.Answer{Status: 409, Body: []byte(`{"error":{"code":"key_in_use"}}`)}))
	require.Equal(t, outcome.Mismatch, cl.Classify(outcome.Answer{Status: 409, Body: []byte(`{"error":{"code":"other"}}`)}),
		"a 409 the in_flight rule does not recognise is the other class of that status, not an answer the profile does not name")

	// A rule on the shared status alone tells nothing apart.
	_, err = profile.Parse("same.yaml", []byte(doc+"outcomes:\n  mismatch: {status: 409}\n"))
	require.ErrorContains(t, err, "line 7: outcomes.mismatch: tests status 409 alone, which expect.in_flight and expect.mismatch share: it takes every 409 as mismatch, and none is ever in_flight")
}

// A key written twice in one mapping is an error naming both lines, reported with the
// rest: YAML would keep the last silently.
func TestAKeyWrittenTwiceIsAnError(t *testing.T) {
	_, err := profile.Parse("dup.yaml", []byte("extends: reference\nretention: 3s\nbase_url: http://127.0.0.1:1\nretention: 5s\noperation:\n  path: /v1/refunds\n  path: /v2/refunds\n"))
	require.Error(t, err)
	require.Contains(t, err.Error(), "line 4: retention: is written twice (first on line 2)")
	require.Contains(t, err.Error(), "line 7: operation.path: is written twice (first on line 6)")

	// In a file the profile extends, the error names that file and its lines.
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "base.yaml"), []byte("extends: reference\nretention: 3s\nretention: 4s\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "child.yaml"), []byte("extends: ./base.yaml\nname: child\nbase_url: http://127.0.0.1:1\n"), 0o600))
	_, err = profile.Load(filepath.Join(dir, "child.yaml"))
	require.Error(t, err)
	require.Contains(t, err.Error(), "retention: is written twice in base.yaml (lines 2 and 3)")
}

func TestMaxKeyLengthIsARange(t *testing.T) {
	p, err := profile.Parse("x.yaml", []byte(minimalProfile))
	require.NoError(t, err)
	p.Expect.MaxKeyLength = 64
	require.NoError(t, p.Validate())
	p.Expect.MaxKeyLength = 20
	require.EqualError(t, p.Validate(), "expect.max_key_length: must be from 43 (every key shape the harness sends must fit: base64url keys are 43 characters) to 4096, got 20")
}

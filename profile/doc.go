// Package profile reads the target profile: the YAML file that describes one API to
// idemproof. Nothing else about a target is hard-coded; the catalogue (package
// scenarios), client-check (package clientcheck) and the CLI all learn the target from a
// *Profile. The full reference, with every field, is docs/profiles.md.
//
//	name: refunds-api
//	extends: ietf-draft-07                 # a preset (Builtin) or another profile file
//	base_url: http://127.0.0.1:8080
//	key_header: Idempotency-Key            # or key_field: a dotted path into the body
//	operation:                             # the keyed, side-effecting call
//	  method: POST
//	  path: /v1/refunds
//	  headers: {Authorization: "Bearer ${REFUNDS_TOKEN}"}
//	  body: '{"order_id": "{{.Entity}}", "amount": 4900}'
//	  altered_body: '{"order_id": "{{.Entity}}", "amount": 5000}'
//	side_effects:                          # the ledger: how many times did it happen?
//	  path: /v1/refunds?order_id={{.Entity}}
//	  count: data.#                        # a gjson path into the answer
//	expect: {in_flight: 409, mismatch: 422, missing_key: "400"}
//	retention: 2s                          # declared windows, waited out by the expiry scenarios
//	slow_operation: {header: X-Test-Delay, value: 400ms}   # test hooks: slow, fail, crash
//	# or query: {ms: "{{.HoldMs}}"}, path: /slow, or field: test.delay (a JSON path into the body)
//	principals: [{Authorization: "Bearer A"}, {Authorization: "Bearer B"}]
//
// What this package guarantees about a *Profile from Load or Parse:
//   - it is valid: every problem of the document is reported at once, each naming its
//     field and line ("profile refunds.yaml: line 12: expect.mismatch: must be a 4xx
//     status …"), unknown fields included; a profile built in Go is checked with Validate;
//   - presets and files named by extends: are merged first, the document's own fields
//     winning; ${NAME} and ${NAME:-default} are expanded from the environment, an unset
//     variable without a default being an error that names it;
//   - templates ({{.Entity}}, {{.Nonce}}, a hook's {{.HoldMs}} and {{.Value}}) are parsed
//     and tried at load time, so a typo is an error now rather than a failed run later;
//     Render and RequestHeaders fill them for one request;
//   - defaults are applied (method POST, key_header Idempotency-Key, client_timeout 2s,
//     the MCP endpoint /mcp) and Source says how a command line names the profile.
//
// What a profile can answer:
//   - Missing(c): why the profile lacks a Capability a scenario needs ("" when it has
//     it): a declaration left out (slow_operation, a second principal) or one the
//     transport cannot express (MCP has no query string of its own). A scenario whose
//     capability is missing is N/A, never a failure. DeclarationFor names the field
//     that supplies a capability (or the fact of the target it is), and Undeclared the
//     fields a scenario still needs: what the reports list as what to declare next;
//   - Classifier: what an answer means (package outcome), from the declared statuses and
//     the outcomes: rules, which may read the body of a 200 (JSON-RPC and MCP refusals);
//   - NewTransport: how a request goes on the wire (plain HTTP, or MCP Streamable HTTP
//     with its sessions); CountLedger and LedgerReader read the ledger through it, a
//     rate-limited read waited out (transport.ThrottleBudget);
//   - TLSClientConfig: how an https:// target is verified (tls.ca_file);
//   - the body's shape: which members a changed request may change
//     (ChangeableMembers), where the entity and the key travel (EntityInRequest,
//     IsKeyMember, Entity), the hooks' forms and holds.
//
// What it does not: a profile is a declaration. Whether the target behaves as declared —
// a hook that holds, a window that is honoured — is for the run to prove, never for the
// profile to assert.
package profile

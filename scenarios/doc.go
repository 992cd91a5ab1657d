// Package scenarios is the conformance catalogue of idemproof: target profiles, plain-data
// scenarios, the runner that drives them through a fault proxy, and the pure checkers that
// turn what was observed into verdicts.
//
//	scenario (data) ──> Run ──> client attempts ──> faultproxy ──> target API
//	                              │                    │               │
//	                              └──> history    journal         ledger probe
//	                                        └──────────┴──> checker ──> verdict + evidence
//
// What is guaranteed:
//   - every run mints fresh keys and entities (a run nonce), so a run never sees the
//     effects of an earlier one, even inside the target's retention window;
//   - every attempt the runner makes is recorded (invoke, then ok / fail / info) and every
//     attempt through the proxy is in its journal (one step, key/header-case's lower-case
//     repeat, goes past the proxy on purpose); the runner's client never reuses a
//     connection, so Go's transport cannot silently resend a keyed request and the
//     journal and the history agree attempt for attempt;
//   - checkers are pure functions of (Record, *Profile): safety invariants are FAIL whatever
//     the profile declares; a failed ledger probe is UNKNOWN, never a pass; a scenario whose
//     capability the profile does not declare is N/A.
//
// How an attempt goes on the wire is the transport's business (package transport: plain
// HTTP, or MCP Streamable HTTP with its sessions and event-stream answers); what an answer
// means is the outcome classifier's (package outcome: the profile's statuses and
// `outcomes:` rules). The runner and the checkers see only attempts and classified answers.
//
// What is not: a PASS is evidence about the attempts that were made, not a proof for every
// interleaving; timing-dependent scenarios (races, expiry, recovery) rely on the profile's
// declared hooks and windows being honest.
package scenarios

// Package scenarios is the conformance catalogue of idemproof: plain-data scenarios, the
// pure checkers that turn what was observed into verdicts, and the runner that drives
// them through a fault proxy. A target is described by its profile (package profile);
// what a check concludes is said in the verdict vocabulary (package verdict); reports
// are written by package report.
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
//     attempt through the proxy is in its journal (two steps go past the proxy on
//     purpose: key/header-case's lower-case repeat and race/keepalive-many-keys's direct
//     route); the runner's client never reuses a connection, so Go's transport cannot
//     silently resend a keyed request and the journal and the history agree attempt for
//     attempt. The one exception, race/keepalive-many-keys, reuses at most four
//     connections with requests the transport cannot resend (no body rewind);
//   - a ledger is counted per fresh entity, or — declared global — as the difference of
//     one count read before and after the scenario, the target's scenarios then running
//     one at a time;
//   - checkers are pure functions of (verdict.Record, *profile.Profile): safety
//     invariants are FAIL whatever the profile declares; a failed ledger probe is
//     UNKNOWN, never a pass; a scenario whose capability the profile does not declare is
//     N/A;
//   - before any scenario, Run checks each target with Preflight (one operation, the
//     ledger read before and after): a target that is not what its profile says is an
//     error naming the field to fix, not a catalogue of UNKNOWNs; the preflight also
//     measures how fast the target answers (Pace); then ProveHooks exercises each test
//     hook the selected scenarios use, once on a fresh key: a hook that does not act
//     stops the run (or, with UnprovenHooksNA, makes its scenarios N/A), and a path or
//     query form the target takes for another operation makes its scenarios UNKNOWN;
//   - a PASS that means "independent" (scope/*, the key pairs) needs a control repeat of
//     the first request to replay its own response; a check of what a replay carries
//     reads the ledger first;
//   - before each scenario, its timing and sizes are fitted to the target (plan.go): to
//     the windows the profile declares (a scenario whose own timing would carry its
//     deciding request past the retention, or meet a lock the lock_timeout made stale,
//     runs with a shorter timing that still proves its point, or is N/A naming the
//     numbers) and to the measured pace (a scenario of many requests gets the time they
//     take; counts are kept). What was changed is in the Record (verdict.Plan) and ends
//     the result's message;
//   - a profile with store: gets a store fault point at store.listen (StartStorePoints;
//     one a caller started, Store.Point, is used as it is) for the whole run, its
//     preflight included, which must see the API's store traffic go through it; a
//     scenario that switches store faults (the store/* group) runs alone on its target,
//     and the store is healed before its settle step whatever happened;
//   - a run stopped early (ctx cancelled) returns promptly with what finished, the rest
//     listed as not run and verdict.Report.Complete false; Findings counts it as a
//     finding.
//
// How an attempt goes on the wire is the transport's business (package transport: plain
// HTTP, MCP Streamable HTTP with its sessions and event-stream answers, or MCP over stdio
// behind the fault layer on the server's pipes, faultproxy/stdio, where a fault the pipes
// cannot carry — a status — makes its scenario N/A, and a scenario that restarts the
// server runs after all others, alone); what an answer
// means is the outcome classifier's (package outcome: the profile's statuses and
// `outcomes:` rules). The runner and the checkers see only attempts and classified answers.
//
// What is not: a PASS is evidence about the attempts that were made, not a proof for every
// interleaving; timing-dependent scenarios (expiry, recovery) rely on the profile's
// declared windows being honest (the hooks are proven, the windows are not).
package scenarios

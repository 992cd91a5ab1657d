// Package verdict is the vocabulary both sides of idemproof judge in: the server-side
// catalogue (package scenarios) and the client-side checks (package clientcheck) return
// Results in it, and every report writer, baseline and diff reads them.
//
//	Level     how strong a requirement is: SAFETY, MUST, SHOULD, POLICY
//	Verdict   what a check concluded: PASS, FAIL, NON-STRICT, INFO, N/A, UNKNOWN
//	Op        one history event of one attempt (invoke, then ok / fail / info)
//	Record    everything one run of a check observed: history, proxy journal, ledger
//	Evidence  what a verdict rests on: categories (duplicated, lost, …), examples, the
//	          attempts it blames, the Record
//	Result    one check against one target
//	Report    one run: every result, with the seed and what did not run
//
// What the words mean:
//   - PASS needs proof: the behaviour the check looks for was seen; FAIL is a definite
//     violation (a safety invariant, a MUST, or what the profile declared); NON-STRICT a
//     missed SHOULD (FAIL under --strict); INFO the observed policy where the spec is
//     silent; N/A the profile lacks what the check needs; UNKNOWN the outcome could not
//     be seen — never counted as a pass.
//   - An Op of type info is an attempt whose outcome the client could not know (a reset
//     after the upstream committed, a timeout): Jepsen's info, not a failure.
//
// The types are the JSON report's schema (ReportSchemaVersion): fields may be added;
// existing names, JSON tags and meanings stay. The package holds data and nothing that
// judges; it imports only the leaves whose records it embeds (the proxy's journal, the
// downstream sink's calls, the outcome classes).
package verdict

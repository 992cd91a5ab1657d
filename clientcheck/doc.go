// Package clientcheck regression-tests a client's retry loop against the Idempotency-Key
// contract. It runs the code under test against the reference refund server behind a
// fault proxy, then checks, per logical operation (entity = the refund's order_id):
//
//	client/one-effect-per-operation  exactly one refund exists for every operation (none lost, none doubled)
//	client/same-key-on-retry         every attempt of an operation carried the same key
//	client/key-per-attempt           the same payload was never re-sent under a fresh key ("key minted per attempt")
//	client/key-shared-by-operations  one key never carried two operations
//	client/no-key                    no attempt of the keyed operation went out without a key
//	client/422-retried               a 422 was not retried unchanged (same key, same body)
//	client/409-hammered              after a 409 the client waited Retry-After (or a backoff) before the next try
//	client/lost-response-resolved    an operation whose response was lost was retried to a known outcome or reported unknown
//	client/unknown-reported-failed   an operation that committed was never reported "failed" by the client
//	client/outcome-file              the client's outcome file parsed
//	client/command-exit              the code under test finished without error
//
//	client ──> faultproxy (faults, journal) ──> reference server (memory store, test hooks)
//
// What is guaranteed: the checks count what the proxy journal saw and what the
// reference server's ledger holds, never what the client believes it sent; they are pure
// functions of an Observation (Check), so they run without a network. The fault schedule
// is data and seeded: the same seed and the same order of requests give the same faults.
//
// What is not: payloads are identified by their body hash, so two distinct operations
// with byte-identical bodies look like one retried payload; a payload that never reached
// the server (every attempt refused before the upstream) has no known entity and is
// reported under its body hash. Timing checks (409) compare the proxy's arrival times,
// with a small tolerance.
//
// The client's own view of each operation is optional: it writes one JSON object per
// line to $IDEMPROOF_OUTCOME_FILE (see Outcome). Without it the checks that need it are
// N/A.
package clientcheck

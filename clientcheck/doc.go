// Package clientcheck regression-tests a client's retry loop against the Idempotency-Key
// contract. It runs the code under test against a target behind a fault proxy — the API
// a profile describes, or the embedded reference refund server — then checks, per
// logical operation (the entity a request names, by the profile's entity: a JSON path
// into the body or a header):
//
//	client/one-effect-per-operation  exactly one side effect exists for every operation (none lost, none doubled)
//	client/same-key-on-retry         every attempt of an operation carried the same key
//	client/same-payload-on-retry     every retry under a key re-sent the same payload
//	client/key-per-attempt           the same payload was never re-sent under a fresh key ("key minted per attempt")
//	client/key-shared-by-operations  one key never carried two operations
//	client/no-key                    no attempt of the keyed operation went out without a key
//	client/422-retried               a mismatch answer was not retried unchanged (same key, same body)
//	client/409-hammered              after an in-flight answer the client waited Retry-After (or a backoff)
//	client/lost-response-resolved    an operation whose response was lost, or refused in flight, was retried to a known outcome or reported unknown
//	client/unknown-reported-failed   an operation that committed was never reported "failed" by the client
//	client/outcome-file              the client's outcome file parsed
//	client/command-exit              the code under test finished without error
//	client/key-survives-restart      with restarts (Config.Restart, the restart kind): the restarted client re-sent the pending operation under its original key
//	client/one-vendor-effect-per-operation  when the target calls a watched vendor: the vendor did each operation as often as the target
//
//	client ──> front (entity, fault kind, delivered answer) ──> faultproxy (faults, journal) ──> target
//	                                                                                  ledger probe ──┘
//	agent ──starts the shim──> stdio fault layer (the front's hooks, faults, journal) ──> stdio server
//
// What is guaranteed: the checks count what the proxy journal saw and what the target's
// ledger holds (read per entity with the profile's side_effects, less what it held before
// the entity's first attempt), never what the client believes it sent. Answers are
// judged by the class the profile's classifier gives the answer the proxy delivered,
// never by raw status. The checks are pure functions of an Observation (Check), so they
// run without a network. The fault schedule is data and seeded: the fault kinds are dealt
// over the operations in the order they first arrive, each kind to one operation of every
// cycle, so the same seed and the same order of operations give the same faults.
//
// What is not: a request that names no entity is grouped by its body hash; payloads are
// compared by their body without the key, so two distinct operations with byte-identical
// bodies look like one payload retried; concurrent operations arrive in no fixed order,
// so their faults are reproducible only as far as their order is; timing checks compare
// the front's times, with a small tolerance.
//
// Restarts (restart.go): the code under test is killed right after an attempt whose
// response the proxy lost, and started again with the same Env and state folder
// (IDEMPROOF_STATE_DIR), once per operation; a command's whole process group gets
// SIGKILL, a ClientFunc's context is cancelled and waited for. Since a killed command
// runs no exit handler, it gets a temporary folder of its own (TMPDIR, Env.TempDir) that
// the run removes at its end.
//
// Agent harnesses over MCP (mcp.go): with a transport: mcp profile the attempts are the
// client's tools/call requests of operation.tool (everything else it sends passes,
// unjudged); with transport: mcp-stdio, or Config.MCP "stdio" (the MCP fixture,
// reference/mcpserver, in-process), the client starts Env.MCPCommand — the shim
// `idemproof proxy --stdio --attach ADDR` — as its server, and the run's stdio fault
// layer (faultproxy/stdio) stands behind it, each start a server process of its own. The
// kill kind kills that server right after it answered: the client sees it exit, and must
// start it again and retry under the same key.
//
// The client's own view of each operation is optional: it writes one JSON object per
// line to $IDEMPROOF_OUTCOME_FILE (see Outcome). Without it the checks that need it are
// N/A.
package clientcheck

// Package storm runs a seeded fault storm against any API its profile describes, and
// judges every operation from the target's own ledger and the fault proxy's journal.
//
//	clients (retryhttp) ──> fault proxy ──> target API ──> its key store (store: point)
//	      │                     │                │
//	   answers              journal           ledger (per operation's entity)
//	      └─────────────────────┴────────────────┴──> judge ──> report (+ shrunk schedules)
//
// A storm is N logical operations (default 2,000) by C concurrent clients (default 32).
// Every operation has a fresh entity and a fresh key, and a schedule dealt from the seed
// and its index alone (so shards agree): an after-upstream fault on its first attempt
// (the target commits, the answer is lost: 503, 502, reset, close, truncated body), a
// duplicate delivery, 2 to 4 concurrent first attempts of its key (each carrying
// slow_operation when the profile declares it, so they meet in flight), a store outage
// (down, reset, hang) its first retry meets — the first attempt committed and its answer
// lost — when the profile declares store:, or nothing. Each copy is sent by the correct client of package retryhttp: the same key and
// body on every attempt, 409, 429, 5xx and transport errors retried with capped backoff
// (Retry-After honoured up to the cap); a body that breaks off is sent again too.
//
// What is judged, per operation, once every operation ended:
//   - duplicated: the ledger shows more than one side effect (more than one per
//     retention window the operation spanned);
//   - lost: a client saw success, the proxy saw the target commit (an upstream 2xx), and
//     the ledger shows nothing;
//   - fabricated: a client saw success while the target committed nothing and the
//     ledger is empty;
//   - differs: a success that is not the committed response (compared as JSON values,
//     the profile's volatile fields left out; the committed body is the one the proxy
//     buffered when it lost it, else the first success a client saw);
//   - failed: no copy got a success within its attempts (an unknown outcome or a
//     refusal) — Jepsen's info, not a violation, but an operation the storm could not
//     bring to an end.
//
// The report counts each category and lists its first operations (op index, key,
// entity, schedule, what was seen), with throughput and p50/p99 of an operation's
// latency. A finding is shrunk: its operation's schedule is re-run alone, smallest
// candidate first (no fault, fewer copies, no hold), a few operations per candidate; the
// first that still shows it is printed with the command that repeats it
// (`idemproof storm --profile P --schedule copies=2+hold --ops 5 --clients 5`).
//
// Bounds: the storm stops at Config.Duration; it keeps per operation a few digests and a
// 200-byte excerpt, never a body (an answer over 4 MiB is not compared), and its proxy's
// journal is bounded (8 MiB, committed bodies up to 1 MiB each), read per operation as it
// ends: its memory grows with the number of operations, not with what the target
// answers. A committed body the journal could not keep is not compared: the first success
// a client saw stands in for it.
//
// What is not guaranteed: a storm is evidence about the interleavings it produced, not a
// proof for all; a target whose ledger counts one global total cannot be judged per
// operation (refused); a stdio MCP server is refused (each storm client would start a
// server process of its own), an MCP tool server over Streamable HTTP is stormed
// (mcp.go).
package storm

// Package faultproxy is an HTTP/1.1 reverse proxy that injects faults before the upstream
// sees a request or AFTER the upstream has committed it, keeps a journal of every attempt,
// and is driven by rules that target one idempotency key or the Nth attempt of a key.
//
//	Client <-> faultproxy <-> Upstream
//	              |
//	           journal (one Record per attempt: key, attempt ordinal, rule, fault,
//	                    upstream status, what the client got, outcome ok/fail/info)
//
// # What is guaranteed
//
//   - Every request the proxy accepts produces exactly one journal Record (unless the
//     journal was Reset while it was in flight, or the record was pushed out of the bounded
//     journal: JournalStats counts those).
//   - A "before-*" fault never sends a byte of the request upstream. An "after-*" fault
//     sends the request upstream exactly once, waits for the complete response, and only
//     then damages what the client gets. "duplicate" sends it exactly twice (to two
//     different upstreams when there are several).
//   - The upstream connection that carried an attempt an "after-*" fault or "duplicate"
//     acts on is never reused: the request goes with "Connection: close" and the proxy
//     closes the connection once the response is read, whatever the upstream answers. The
//     client's retry (and a duplicate's second copy) reaches the upstream on another
//     connection, as it would through another proxy instance; a target that scopes its
//     idempotency state to a connection would otherwise pass every lost-response check.
//     Pass-through and "before-*" attempts keep their pooled connections.
//   - The proxy's own upstream transport never replays a keyed request on its own. Plain
//     http calls with a small or buffered body go through the proxy's direct client
//     (upstream_direct.go), which never resends anything; the rest go through Go's
//     http.Transport, which treats a request carrying Idempotency-Key as replayable, so
//     the proxy sends keyed requests in a form the Transport cannot rewind (see
//     upstream.go). Record.UpstreamCalls is what the upstream received.
//   - Rule selection and probability are applied in one place (ruleSet.choose) from one
//     seeded source: with sequential clients, the same Seed gives the same fault sequence.
//     Reset reseeds it.
//   - With no fault that needs the upstream's response (pass-through, before-delay,
//     duplicate) the response streams through unbuffered. Faults that act on the response
//     buffer it up to Config.BufferLimit; beyond that the fault is not applied, the
//     response is streamed as is, and Record.Note says so.
//   - An event stream (text/event-stream) passes through flushed chunk by chunk; a fault
//     that needs the response reads it until the upstream ends it or the JSON-RPC
//     response to the request's id has arrived, for at most Config.StreamWait, then
//     applies to what arrived (event_stream.go). JSON-RPC requests are
//     journaled with their id and method, and with Config.Classify every attempt with
//     the outcome class of what its client got (jsonrpc.go).
//   - Memory is bounded by bytes whatever clients send: the journal by Config.JournalBytes
//     (records clipped first, the oldest evicted and counted), the attempt counters by
//     Config.AttemptKeyBytes, buffered bodies by Config.BufferLimit, rules by MaxRules.
//     Idle upstream connections are closed in the background once idle for
//     Config.UpstreamIdleTimeout, so the pool shrinks back to what the upstream calls
//     of the last timeout needed at once.
//   - A client's request body that stalls (Config.BodyTimeout) or is malformed never
//     reaches the upstream as a complete request: a small or chunked one fails before the
//     upstream call (408 / 400), a streaming one aborts the upstream call.
//   - Start serves every connection on a fast path first (fast_server.go,
//     fast_exchange.go): a pass-through attempt whose head is of the common shape
//     (internal/h1) and whose body has arrived is forwarded without net/http's server.
//     At the first request it does not take — a fault, anything internal/h1 calls
//     Unsupported, a head or body not wholly arrived — the connection moves for good to
//     net/http's server with its unread bytes in front, so every net/http defence applies
//     to it; a faulted attempt carries the fast path's decision along. Both paths give the
//     same journal record, upstream request (but for field-name case and order) and
//     client answer; fast_path_test.go holds them to it.
//   - With Config.KeyField the key is read from a JSON body only when every reader would
//     read the same one (key.go): a body nested past MaxJSONDepth, or whose key path names
//     a member twice or in two letter cases, is refused (400) before the upstream sees
//     it; a body that is not valid JSON, or a JSON-RPC batch, carries no key.
//   - A request target holding a raw '#' is refused (400): Go's server would take it into
//     the path, which the upstream would then get as %23.
//   - Rules are decoded strictly (case-sensitive names, no unknown or repeated field, no
//     trailing data), the same way from JSON and YAML; a batch is added all or none.
//
// # What is not
//
//   - HTTP/2, WebSocket upgrades and response trailers are not proxied.
//   - Unkeyed GET/HEAD requests that go through http.Transport (https upstreams, a
//     streamed body) may still be retried by it on a broken keep-alive connection (they
//     are safe by HTTP semantics; keyed requests never are).
//   - Under concurrent clients the fault sequence follows arrival order, which the OS
//     schedules: a seed reproduces a run exactly only for sequential attempts.
//
// Faults are small types implementing Fault (one method); DefaultFaults is the explicit
// registry of the built-in ones, and docs/faultproxy.md (CREATING_FAULTS) is the contract
// for adding one.
//
// Engine is the proxy without its HTTP side — rule selection, attempt numbering, the
// journal and the admin API — for a fault layer of another medium that applies faults
// of its own: faultproxy/stdio, on a stdio MCP server's pipes.
package faultproxy

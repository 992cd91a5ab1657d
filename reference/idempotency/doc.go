// Package idempotency is a net/http middleware that makes any side-effecting handler safe
// to retry with an Idempotency-Key header. It is the reference semantics of idemproof:
//
//	client ──> Middleware ──(key recorded, locked)──> handler stages effects
//	                │                                        │
//	                └──── effects + stored response, ONE transaction, fenced
//
// Guarantees, for one scope (principal, endpoint, key) inside the retention window:
//
//   - The key is recorded and locked BEFORE the wrapped handler runs, so two attempts
//     never both execute.
//   - The handler does not write to the database itself: it stages its effects
//     (Stage) and the store commits them together with the response it produced, in one
//     transaction that first checks the fencing token. A request whose lock went stale
//     and was taken over can therefore never commit, even if it was only slow.
//   - A repeat after completion gets the stored status, body and allow-listed headers
//     byte for byte, plus "Idempotent-Replayed: true". The first response has no marker.
//   - A repeat while the original runs gets 409 with Retry-After; it is never fabricated.
//   - The same key with another fingerprint (method, path, principal, canonical JSON
//     body) gets 422 and leaves the stored record untouched. Two bodies with one
//     fingerprint decode to the same value with encoding/json; a body that could break
//     that (two members a decoder takes for one name, a number beyond float64) gets 400
//     before the key is recorded.
//   - A lock older than the lock timeout is stale: the next attempt takes the key over
//     (a crashed request does not wedge its key).
//   - The window starts when the key is first recorded; a key past it counts as absent
//     even before the cleanup job deletes it.
//
// Storage policy:
//
//   - rejected before execution (the handler called NotExecuted, e.g. validation):
//     not stored, the key is released; retrying with the same key is safe.
//   - executed, 2xx or 4xx (business errors): effects and response stored, replayed.
//   - 5xx: the staged effects are discarded and the key released, so a retry
//     re-executes.
//
// Not guaranteed: anything the handler does outside Stage (it is not rolled back), and
// anything after the retention window (a repeat then executes anew, by design).
//
// Flaws are switchable known-bad variants of these rules, modelled on bugs real
// libraries shipped; they exist so a conformance suite can prove it catches them.
package idempotency

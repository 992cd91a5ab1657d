// Package idempotency is a net/http middleware that makes any side-effecting handler safe
// to retry with an Idempotency-Key header. It is the reference semantics of idemproof:
//
//	client ──> Middleware ──(key recorded, locked)──> handler stages effects
//	                │                                        │
//	                └──── effects + stored response, ONE transaction, fenced
//
// Guarantees, for one scope (principal, endpoint, key) inside the retention window:
//
//   - The key is recorded and locked BEFORE the wrapped handler runs (on the
//     one-transaction path: before its rows are written), so two attempts never both
//     execute.
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
// Two paths, chosen per handler:
//
//   - Two-phase (the default, every store): the key is recorded and locked in one
//     transaction, the handler runs, and the effects commit with the response in a
//     second, fenced one. Use it for work with effects outside the database (a payment
//     provider's call, a message sent): the key must be held while they happen, and a
//     crashed holder's lock goes stale after the lock timeout.
//   - One transaction (Config.OneTransaction, a LocalStore such as PostgreSQL's): for a
//     handler whose whole work is the rows it stages. The handler runs first, into the
//     buffer; then ONE transaction takes the key's transaction lock without waiting
//     (a concurrent repeat, on any replica, gets 409), writes the key with the stored
//     response and the staged rows, or answers the live record (replay, 422, or 409 for a
//     live two-phase lock). It pays one commit where the two-phase path pays two; a crash
//     rolls everything back and releases the lock, so there is no stale lock, no
//     takeover and no fencing on it. The rules above hold with two differences: another
//     payload during the original gets 409, not 422 (the original's fingerprint is not
//     committed yet), and an original slower than the lock timeout keeps its key to the
//     end. A request the handler rejected (NotExecuted) or failed (5xx) still gets the
//     live record's answer when there is one. The AfterKey hook runs inside the
//     transaction, which then costs round trips: set it only in tests. With any flaw
//     switched on the two-phase path is used (the flaws model its bugs).
//
// Flaws are switchable known-bad variants of these rules, modelled on bugs real
// libraries shipped; they exist so a conformance suite can prove it catches them.
package idempotency

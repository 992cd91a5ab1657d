// Package storefault is the store fault point: a TCP proxy between a target API and its
// own key store (Redis, a SQL database, a KV), whose faults a run switches on and off.
//
//	API ──> Point (Listen) ──> key store (Upstream)
//
// The catalogue's other faults sit on the HTTP path between a client and the API; this
// one sits on the API's own dependency, so a run can see what the API does when the store
// that keeps its idempotency keys fails: refuse (a retryable 5xx), or run the work anyway,
// unkeyed ("fail open") — the bug that turns a retry during a store outage into a second
// side effect.
//
// Faults (one at a time; Set replaces the previous one, Heal clears it):
//
//   - Down: existing connections are cut and new ones are accepted and closed at once,
//     before any byte passes (to a client as good as refused, and the point can count
//     the attempts: proof that the API reached for its store during the outage).
//   - Reset: every connection is reset (TCP RST) at its next byte, new ones at their
//     first: a store that flaps.
//   - Latency(d): every byte from the store arrives d late: a slow store.
//   - Hang: bytes are dropped in both directions and connections stay open, so a call
//     waits until the caller's own timeout (a store that stopped answering); healing it
//     closes the connections that hung.
//
// What is guaranteed: faults apply to every connection through the point, existing and
// new, from the moment Set returns; Stats counts every connection accepted, every one the
// Down fault refused or cut, and the bytes each way, so a caller can prove the API's
// store traffic went through the point at all (an API configured with another address
// never shows up). What is not: the point does not understand the store's protocol (a
// fault hits whole connections, not single commands), and it cannot restart the store
// itself — a store that loses its keys on a restart is the store's business.
//
// Why Toxiproxy: the TCP plumbing — accepting, dialling the upstream per connection,
// copying both directions, latency without dropping bytes, a timeout that swallows data,
// resets with SO_LINGER 0, faults added to live connections without corrupting their
// streams — is what Toxiproxy (github.com/Shopify/toxiproxy/v2) does and has been hardened
// for, so the point runs its proxy and toxics in process rather than a hand-written copy.
// One toxic is ours (tap.go): Toxiproxy counts no connections and has no "refuse new
// connections but keep the port" fault (its own disable closes the listener, and a port
// given back can be taken by another socket before it is re-bound), so the tap counts
// connections and bytes and refuses and cuts connections for Down, through Toxiproxy's
// documented extension contract (CREATING_TOXICS.md).
package storefault

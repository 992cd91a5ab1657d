// Package downstream is a recording HTTP sink that stands in for a vendor a target calls
// (an email, a payment, a webhook): it observes the boundary the Idempotency-Key of the
// target's own API does not cover.
//
//	client <-> faultproxy <-> target API --(its own calls)--> Sink (the "vendor")
//
// Semantics:
//
//   - Every request is a Call: method, path, the downstream key (a header or a JSON
//     field of the body, as configured), the entity it names (a JSON path into its body),
//     a SHA-256 of the body, when it arrived, what the sink answered, and whether the
//     caller had hung up before that answer was written (CallerLeft: its own timeout
//     fired while the sink was slow, so a re-send under the same key is a correct
//     sender's, not a second operation).
//   - The sink behaves as a well-behaved keyed vendor: a call whose key it already
//     committed is a replay (answered 200 with the first answer's id, no new effect); a
//     call without a key always commits a new effect. Effects is therefore "what the
//     vendor did", Calls "what the target sent".
//   - Rules inject faults on the n-th call of an entity: 503 before committing (the
//     vendor did nothing), 503 after committing (the vendor did it, the target cannot
//     know), or a connection reset after committing. A rule fires once.
//   - A sink in another process (`idemproof vendor`, a container) serves AdminHandler on
//     a listener of its own; Remote drives it, and both satisfy Recorder, what a runner
//     needs. A Remote that cannot read the calls says so (an error), never "no calls".
//   - Memory is bounded: at most MaxCalls calls are kept (later calls are still answered
//     and counted in Dropped), bodies are read up to MaxBody bytes.
//
// Not provided: persistence, TLS, or authentication; the sink is a test fixture on
// loopback (or on an address a container can reach).
package downstream

// Package reference is idemproof's reference keyed refund server: the Idempotency-Key
// contract done right (see package idempotency for the exact guarantees and storage
// policy), on a memory or PostgreSQL store, with switchable flaws — known-bad variants
// the scenario catalogue must catch.
//
//	POST /v1/refunds   {"order_id":"o1","amount":4900,"reason":"..."}  keyed → 201
//	POST /v1/invoices  {"order_id":"o1","amount":4900}                 keyed → 201
//	GET  /v1/refunds?order_id=o1   the ledger, global across principals: {"data":[...],"count":N}
//	GET  /v1/invoices?order_id=o1
//	GET  /healthz
//
// Principals: with no tokens configured (open mode, for tests and the quick path) a
// request without Authorization acts as the principal "anonymous" and
// "Authorization: Bearer X" names principal X (the token "anonymous" is refused: that
// principal is reserved for requests without credentials). With tokens configured, only those
// tokens are accepted (401 otherwise) and the token is the principal. Keys are scoped
// per principal and endpoint. The ledger needs no credentials.
//
// A request body has a time limit (WithBodyTimeout, default 60s; past it 408).
//
// Errors are RFC 9457 application/problem+json. A validation error (missing order_id,
// amount not a positive integer) is 400, not executed and not stored; amount above
// 1,000,000 is a business error: 402 refund-limit-exceeded, executed (no refund row) and
// stored, so it is replayed.
//
// Test hooks (WithTestHooks) and flaws (WithFlaws, Flaws) exist for the harness only.
package reference

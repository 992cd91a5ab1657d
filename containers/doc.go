// Package containers holds what every idemproof container helper shares: publishing
// ports on the loopback interface only, and the deadline every start gets.
//
// The helpers themselves live in sub-packages, one per image role, in testcontainers-go
// module style (module defaults first, caller options last, so the caller wins):
//
//	referencectr  the reference keyed refund server (`idemproof serve`)
//	proxyctr      the fault proxy (`idemproof proxy`) in front of any upstream, yours included
//
// Nothing here pulls an image: the names come from the caller (the suites use
// internal/dockertest, which reads IDEMPROOF_IMAGE / IDEMPROOF_POSTGRES_IMAGE).
package containers

// Package flaws is the Ginkgo suite that proves the catalogue catches real bugs: the
// embedded reference server is run with each of its known flaws (reference.Flaws), and
// the scenario the flaw names (CaughtBy) must fail; the correct server must give zero
// FAIL and zero UNKNOWN under strict, on the memory store and on PostgreSQL.
//
// Speed: per flaw the suite runs the caught-by scenario's whole group (e.g. race/* for
// check-then-set), not the whole catalogue; $IDEMPROOF_FLAWS_FULL=true runs the whole
// catalogue per flaw instead. Either way the caught-by scenario must be one of the
// failures, and a FAIL elsewhere in the group is allowed (a flaw may break more).
//
// The storm (package storm) runs against check-then-set at its default size too: it
// must find duplicates in every run, whatever the seed, and shrink one to a schedule of
// at most three requests. The two flaws of a failing key store (fail-open-on-store-error,
// store-timeout-as-miss) are caught on PostgreSQL, whose key store the embedded reference
// reaches through a store fault point; a memory store has no connection to fault.
//
// "Fails" means FAIL, or NON-STRICT under strict: the suite runs strict, because two
// flaws (no-replay-header) break a SHOULD, whose miss is NON-STRICT by design.
package flaws

package pgstore_test

import (
	"testing"

	"github.com/idemproof/idemproof/reference/pgstore"
	"github.com/idemproof/idemproof/reference/servertest"
)

// httpCases are the HTTP-level tests that must also hold on PostgreSQL.
var httpCases = []struct {
	name string
	run  func(*testing.T, *pgstore.Store)
}{
	{"server suite, one-transaction path", func(t *testing.T, s *pgstore.Store) { servertest.Run(t, s, 1000) }},
	{"server suite, two-phase path", func(t *testing.T, s *pgstore.Store) { servertest.Run(t, servertest.TwoPhase(s), 1000) }},
}

package pgstore_test

import (
	"testing"

	"github.com/idemproof/idemproof/reference/pgstore"
)

// httpCases are the HTTP-level tests that must also hold on PostgreSQL.
var httpCases = []struct {
	name string
	run  func(*testing.T, *pgstore.Store)
}{}

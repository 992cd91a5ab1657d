package memstore_test

import (
	"testing"

	"github.com/idemproof/idemproof/reference/memstore"
	"github.com/idemproof/idemproof/reference/servertest"
)

func TestServerOnMemoryStore(t *testing.T) {
	servertest.Run(t, memstore.New(), 1000)
}

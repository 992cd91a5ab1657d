package memstore_test

import (
	"testing"

	"github.com/idemproof/idemproof/reference/memstore"
	"github.com/idemproof/idemproof/reference/storetest"
)

func TestMemoryStore(t *testing.T) {
	storetest.Run(t, memstore.New())
}

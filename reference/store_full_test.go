package reference_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/reference"
	"github.com/idemproof/idemproof/reference/memstore"
	"github.com/idemproof/idemproof/reference/servertest"
)

// A memory store that holds its byte budget answers a new key 507 with a problem that
// says what to do, executing nothing and recording nothing; the keys it holds still
// replay, and the ledger still reads. Unkeyed refunds (--keys-optional) are refused the
// same way once the budget's sixteenth of headroom is used.
func TestFullMemoryStoreAnswers507(t *testing.T) {
	store := memstore.New(memstore.WithMaxBytes(1 << 20))
	e := servertest.Start(t, store, reference.WithKeysOptional(true))
	order := servertest.Fresh("order")
	var kept string
	full := 0
	for i := 0; i < 10_000 && full == 0; i++ {
		key := servertest.Fresh("key")
		r := e.Post(t, refunds, key, body(order, 4900))
		switch r.Status {
		case http.StatusCreated:
			kept = key
		case http.StatusInsufficientStorage:
			full = i
			var p struct{ Type, Detail string }
			require.NoError(t, json.Unmarshal(r.Body, &p))
			require.Equal(t, "https://idemproof.dev/problems/store-full", p.Type)
			require.Contains(t, p.Detail, "nothing was executed")
			require.Contains(t, p.Detail, "--memory-limit")
		default:
			t.Fatalf("refund %d: %d %s", i, r.Status, r.Body)
		}
	}
	require.NotZero(t, full, "the store never filled")
	require.Equal(t, full, e.Count(t, "refunds", order), "every refund answered 201 is in the ledger, the refused one is not")
	require.LessOrEqual(t, store.Bytes(), store.MaxBytes()+store.MaxBytes()/16)

	replay := e.Post(t, refunds, kept, body(order, 4900))
	require.Equal(t, http.StatusCreated, replay.Status)
	require.True(t, replay.Replayed(), "a key the store holds still replays")

	unkeyed := 0
	for i := 0; i < 10_000; i++ {
		r := e.Post(t, refunds, "", body(order, 4900))
		if r.Status == http.StatusInsufficientStorage {
			break
		}
		require.Equal(t, http.StatusCreated, r.Status)
		unkeyed++
	}
	require.Less(t, unkeyed, 10_000, "unkeyed refunds were never refused")
	require.Equal(t, full+unkeyed, e.Count(t, "refunds", order))
	require.LessOrEqual(t, store.Bytes(), store.MaxBytes()+store.MaxBytes()/16+2048)
}

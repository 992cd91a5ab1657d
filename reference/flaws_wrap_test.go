package reference_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/reference"
	"github.com/idemproof/idemproof/reference/memstore"
	"github.com/idemproof/idemproof/reference/servertest"
)

// The misbehaviour of each wrapping flaw (reference/flaws_wrap.go), at the HTTP level;
// TestEachFlawMisbehaves runs them with the others.
var wrapperFlawCases = map[string]func(t *testing.T, e *servertest.Env, order, key string){
	"wedge-after-contention": func(t *testing.T, e *servertest.Env, order, key string) {
		done := make(chan servertest.Reply, 1)
		go func() { done <- e.Post(t, refunds, key, body(order, 4900), reference.HeaderTestDelay, "1s") }()
		e.WaitHeld(t, reference.Anonymous, refunds, key)
		require.Equal(t, http.StatusConflict, e.Post(t, refunds, key, body(order, 4900)).Status, "a repeat meets the original in flight")
		require.Equal(t, http.StatusCreated, (<-done).Status)
		for i := 0; i < 3; i++ {
			require.Equal(t, http.StatusConflict, e.Post(t, refunds, key, body(order, 4900)).Status, "the key stays at 409 after the original committed")
		}
		require.Equal(t, 1, e.Count(t, "refunds", order))

		// A burst of plain requests is contention enough: the marker's round trip keeps
		// the first request in the server while the others arrive.
		burstKey, burstOrder := servertest.Fresh("k-"), servertest.Fresh("o-")
		servertest.Burst(t, e, 50, burstKey, body(burstOrder, 4900))
		require.Equal(t, http.StatusConflict, e.Post(t, refunds, burstKey, body(burstOrder, 4900)).Status, "wedged after the burst")
		require.Equal(t, 1, e.Count(t, "refunds", burstOrder))

		// Without contention the key replays as it should.
		seqKey, seqOrder := servertest.Fresh("k-"), servertest.Fresh("o-")
		first := e.Post(t, refunds, seqKey, body(seqOrder, 4900))
		require.Equal(t, http.StatusCreated, first.Status)
		require.Equal(t, first.Body, e.Post(t, refunds, seqKey, body(seqOrder, 4900)).Body)
	},
	"replay-error-as-success": func(t *testing.T, e *servertest.Env, order, key string) {
		first := e.Post(t, refunds, key, body(order, 2_000_000))
		require.Equal(t, http.StatusPaymentRequired, first.Status)
		again := e.Post(t, refunds, key, body(order, 2_000_000))
		require.Equal(t, http.StatusOK, again.Status, "the stored 402 is replayed as a success")
		require.Empty(t, again.Body)
		require.True(t, again.Replayed())
		require.Equal(t, 0, e.Count(t, "refunds", order), "nothing executed")
	},
	"key-aliasing": func(t *testing.T, e *servertest.Env, order, key string) {
		other := servertest.Fresh("k-") // the same length as key
		require.Len(t, other, len(key))
		first := e.Post(t, refunds, key, body(order, 4900))
		second := e.Post(t, refunds, other, body(order, 4900)) // the same keep-alive connection
		require.Equal(t, http.StatusCreated, second.Status)
		require.True(t, second.Replayed(), "the second key finds the first key's record")
		require.Equal(t, first.Body, second.Body)
		require.Equal(t, 1, e.Count(t, "refunds", order), "two keys, one side effect")

		// On fresh connections the keys stay apart: the flaw needs connection reuse.
		fresh, k1, k2 := servertest.Fresh("o-"), servertest.Fresh("k-"), servertest.Fresh("k-")
		require.Equal(t, http.StatusCreated, e.PostFresh(t, refunds, k1, body(fresh, 4900)).Status)
		require.False(t, e.PostFresh(t, refunds, k2, body(fresh, 4900)).Replayed())
		require.Equal(t, 2, e.Count(t, "refunds", fresh))
	},
	"distinct-keys-dedup": func(t *testing.T, e *servertest.Env, order, key string) {
		first := e.PostFresh(t, refunds, key, body(order, 4900))
		second := e.PostFresh(t, refunds, servertest.Fresh("other-"), body(order, 4900))
		require.True(t, second.Replayed(), "another key with the same payload is a replay")
		require.Equal(t, first.Body, second.Body)
		require.Equal(t, 1, e.Count(t, "refunds", order))
	},
	"evict-oldest-keys": func(t *testing.T, e *servertest.Env, order, key string) {
		first := e.Post(t, refunds, key, body(order, 4900))
		require.Equal(t, http.StatusCreated, first.Status)
		newer := servertest.Fresh("o-")
		for i := 0; i < 127; i++ {
			require.Equal(t, http.StatusCreated, e.Post(t, refunds, servertest.Fresh("k-"), body(newer, 100)).Status)
		}
		kept := e.Post(t, refunds, key, body(order, 4900))
		require.True(t, kept.Replayed(), "127 newer keys: the key is still in the cache")
		require.Equal(t, first.Body, kept.Body)
		for i := 0; i < 128; i++ {
			require.Equal(t, http.StatusCreated, e.Post(t, refunds, servertest.Fresh("k-"), body(newer, 100)).Status)
		}
		again := e.Post(t, refunds, key, body(order, 4900))
		require.Equal(t, http.StatusCreated, again.Status)
		require.False(t, again.Replayed(), "128 newer keys since its last use: the key was evicted and executes again")
		require.Equal(t, 2, e.Count(t, "refunds", order))
	},
	"strict-key-shape": func(t *testing.T, e *servertest.Env, order, key string) {
		require.Equal(t, http.StatusInternalServerError, e.Post(t, refunds, key, body(order, 4900)).Status, "a valid key that is not 36 characters")
		require.Equal(t, http.StatusCreated, e.Post(t, refunds, "3f0c1d5e-8b8a-4c1e-9d3a-5b7e2a9c4f10", body(order, 4900)).Status)
		require.Equal(t, 1, e.Count(t, "refunds", order))
	},
}

// The correct server keeps keys apart on a reused connection, where key-aliasing does not.
func TestKeysStayApartOnAReusedConnection(t *testing.T) {
	e := servertest.Start(t, memstore.New())
	order := servertest.Fresh("o-")
	for i := 0; i < 20; i++ {
		require.False(t, e.Post(t, refunds, servertest.Fresh("k-"), body(order, 4900)).Replayed())
	}
	require.Equal(t, 20, e.Count(t, "refunds", order))
}

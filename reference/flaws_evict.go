package reference

import (
	"container/list"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"sync"

	"github.com/idemproof/idemproof/reference/idempotency"
)

// evictionCapacity is how many keys evictOldestKeys remembers: a per-process LRU cache of
// recent keys in front of (or instead of) a durable store, sized for "the retries come
// quickly" rather than for the declared retention.
const evictionCapacity = 128

// evictOldestKeys models keys kept in a bounded LRU cache: once evictionCapacity newer
// keys have arrived, the oldest one is forgotten, and its retry, inside the retention, is
// a new request that executes again. It renames every well-formed key to the cache
// entry's own name (a new name for a key the cache does not hold), so a correct
// middleware behind it sees an evicted key as a fresh one. A key the middleware would
// refuse is left for it to refuse.
func evictOldestKeys(next http.Handler) http.Handler {
	type entry struct{ scope, name string }
	var mu sync.Mutex
	order := list.New() // front: most recently used
	byScope := map[string]*list.Element{}
	generation := 0
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := idempotency.ParseKey(r.Header.Values(idempotency.HeaderKey)); err != nil {
			next.ServeHTTP(w, r)
			return
		}
		scope := flawScope(r)
		mu.Lock()
		el, ok := byScope[scope]
		if ok {
			order.MoveToFront(el)
		} else {
			generation++
			sum := sha256.Sum256([]byte(scope))
			el = order.PushFront(entry{scope, "lru-" + hex.EncodeToString(sum[:16]) + "-" + strconv.Itoa(generation)})
			byScope[scope] = el
			if order.Len() > evictionCapacity {
				oldest := order.Back()
				order.Remove(oldest)
				delete(byScope, oldest.Value.(entry).scope)
			}
		}
		name := el.Value.(entry).name
		mu.Unlock()
		r.Header.Set(idempotency.HeaderKey, name)
		next.ServeHTTP(w, r)
	})
}

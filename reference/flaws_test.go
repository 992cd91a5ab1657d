package reference_test

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/idemproof/idemproof/internal/doctest"
	"github.com/idemproof/idemproof/reference"
	"github.com/idemproof/idemproof/reference/memstore"
	"github.com/idemproof/idemproof/reference/servertest"
	"github.com/stretchr/testify/require"
)

const refunds = "/v1/refunds"

func body(order string, amount int) string { return servertest.RefundBody(order, amount) }

// Each flaw must really misbehave, or the flaw suite would have nothing to catch. Held
// work lasts long enough (1s) that the next request surely arrives while it runs, even
// on a loaded machine.
func TestEachFlawMisbehaves(t *testing.T) {
	cases := map[string]func(t *testing.T, e *servertest.Env, order, key string){
		"check-then-set": func(t *testing.T, e *servertest.Env, order, key string) {
			replies := servertest.Burst(t, e, 10, key, body(order, 4900), reference.HeaderTestDelay, "500ms")
			for _, r := range replies {
				require.Equal(t, http.StatusCreated, r.Status)
			}
			require.Greater(t, e.Count(t, "refunds", order), 1, "concurrent first attempts all executed")
		},
		"no-fingerprint": func(t *testing.T, e *servertest.Env, order, key string) {
			first := e.Post(t, refunds, key, body(order, 4900))
			other := e.Post(t, refunds, key, body(order, 5000))
			require.Equal(t, http.StatusCreated, other.Status, "another payload is replayed, not refused")
			require.Equal(t, first.Body, other.Body)
		},
		"fingerprint-in-key": func(t *testing.T, e *servertest.Env, order, key string) {
			e.Post(t, refunds, key, body(order, 4900))
			other := e.Post(t, refunds, key, body(order, 5000))
			require.Equal(t, http.StatusCreated, other.Status)
			require.False(t, other.Replayed())
			require.Equal(t, 2, e.Count(t, "refunds", order))
		},
		"fabricate-in-flight": func(t *testing.T, e *servertest.Env, order, key string) {
			done := make(chan servertest.Reply, 1)
			go func() { done <- e.Post(t, refunds, key, body(order, 4900), reference.HeaderTestDelay, "1s") }()
			e.WaitHeld(t, reference.Anonymous, refunds, key)
			r := e.Post(t, refunds, key, body(order, 4900))
			require.Equal(t, http.StatusOK, r.Status, "a success is fabricated while nothing has completed")
			<-done
		},
		"pin-5xx": func(t *testing.T, e *servertest.Env, order, key string) {
			e.Post(t, refunds, key, body(order, 4900), reference.HeaderTestFail, "503")
			retry := e.Post(t, refunds, key, body(order, 4900))
			require.Equal(t, http.StatusServiceUnavailable, retry.Status)
			require.True(t, retry.Replayed())
			require.Equal(t, 0, e.Count(t, "refunds", order))
		},
		"wedge-on-crash": func(t *testing.T, e *servertest.Env, order, key string) {
			require.Error(t, e.PostFresh(t, refunds, key, body(order, 4900), reference.HeaderTestCrash, "after-key").Err)
			// Past the lock timeout, still inside the window.
			e.Clock.Advance((flawLockTimeout + flawRetention) / 2)
			require.Equal(t, http.StatusConflict, e.Post(t, refunds, key, body(order, 4900)).Status, "the key stays wedged")
			require.Equal(t, 0, e.Count(t, "refunds", order))
		},
		"no-fencing": func(t *testing.T, e *servertest.Env, order, key string) {
			done := make(chan servertest.Reply, 1)
			go func() { done <- e.Post(t, refunds, key, body(order, 4900), reference.HeaderTestDelay, "1s") }()
			e.WaitHeld(t, reference.Anonymous, refunds, key)
			e.Clock.Advance(flawLockTimeout)
			require.Equal(t, http.StatusCreated, e.Post(t, refunds, key, body(order, 4900)).Status)
			require.Equal(t, http.StatusCreated, (<-done).Status)
			require.Equal(t, 2, e.Count(t, "refunds", order), "the stale original committed too")
		},
		"global-scope": func(t *testing.T, e *servertest.Env, order, key string) {
			alice := e.Post(t, refunds, key, body(order, 4900), "Authorization", "Bearer alice")
			bob := e.Post(t, refunds, key, body(order, 4900), "Authorization", "Bearer bob")
			require.True(t, bob.Replayed())
			require.Equal(t, alice.Body, bob.Body, "bob receives alice's stored response")
		},
		"endpoint-blind": func(t *testing.T, e *servertest.Env, order, key string) {
			payload := fmt.Sprintf(`{"order_id":%q,"amount":4900}`, order)
			refund := e.Post(t, refunds, key, payload)
			invoice := e.Post(t, "/v1/invoices", key, payload)
			require.True(t, invoice.Replayed())
			require.Equal(t, refund.Body, invoice.Body, "the invoice call gets the refund")
			require.Equal(t, 0, e.Count(t, "invoices", order))
		},
		"never-expire": func(t *testing.T, e *servertest.Env, order, key string) {
			first := e.Post(t, refunds, key, body(order, 4900))
			e.Clock.Advance(10 * flawRetention)
			again := e.Post(t, refunds, key, body(order, 4900))
			require.True(t, again.Replayed())
			require.Equal(t, first.Body, again.Body)
		},
		"early-expiry": func(t *testing.T, e *servertest.Env, order, key string) {
			e.Post(t, refunds, key, body(order, 4900))
			e.Clock.Advance(flawRetention / 2)
			again := e.Post(t, refunds, key, body(order, 4900))
			require.False(t, again.Replayed(), "inside the declared window the key is already gone")
			require.Equal(t, 2, e.Count(t, "refunds", order))
		},
		"replay-regenerates": func(t *testing.T, e *servertest.Env, order, key string) {
			first := e.Post(t, refunds, key, body(order, 4900))
			again := e.Post(t, refunds, key, body(order, 4900))
			require.True(t, again.Replayed())
			require.NotEqual(t, first.Body, again.Body)
			require.Equal(t, 1, e.Count(t, "refunds", order))
		},
		"no-replay-header": func(t *testing.T, e *servertest.Env, order, key string) {
			first := e.Post(t, refunds, key, body(order, 4900))
			again := e.Post(t, refunds, key, body(order, 4900))
			require.Equal(t, first.Body, again.Body)
			require.Empty(t, again.Header.Get("Idempotent-Replayed"))
		},
		"mismatch-overwrites": func(t *testing.T, e *servertest.Env, order, key string) {
			e.Post(t, refunds, key, body(order, 4900))
			require.Equal(t, http.StatusUnprocessableEntity, e.Post(t, refunds, key, body(order, 5000)).Status)
			require.Equal(t, http.StatusCreated, e.Post(t, refunds, key, body(order, 5000)).Status,
				"the uncorrected changed request goes through on its next try")
		},
		"key-casefold": func(t *testing.T, e *servertest.Env, order, key string) {
			first := e.Post(t, refunds, "Ab_9-"+key, body(order, 4900))
			other := e.Post(t, refunds, "aB_9-"+key, body(order, 4900))
			require.Equal(t, http.StatusCreated, other.Status)
			require.True(t, other.Replayed(), "a key differing only in case finds the first key's record")
			require.Equal(t, first.Body, other.Body)
			require.Equal(t, 1, e.Count(t, "refunds", order), "two keys, one side effect")
		},
		"key-truncate-64": func(t *testing.T, e *servertest.Env, order, key string) {
			prefix := key + strings.Repeat("p", 254-len(key))
			first := e.Post(t, refunds, prefix+"1", body(order, 4900))
			other := e.Post(t, refunds, prefix+"2", body(order, 4900))
			require.Equal(t, http.StatusCreated, other.Status)
			require.True(t, other.Replayed(), "a 255-character key sharing the first 64 characters finds the first key's record")
			require.Equal(t, first.Body, other.Body)
			require.Equal(t, 1, e.Count(t, "refunds", order))

			// Keys that differ inside their first 64 characters stay apart.
			short := e.Post(t, refunds, "x"+key, body(order, 4900))
			require.False(t, short.Replayed())
			require.Equal(t, 2, e.Count(t, "refunds", order))
		},
		"fingerprint-amount-only": func(t *testing.T, e *servertest.Env, order, key string) {
			first := e.Post(t, refunds, key, body(order, 4900))
			otherReason := fmt.Sprintf(`{"order_id":%q,"amount":4900,"reason":"duplicate"}`, order)
			other := e.Post(t, refunds, key, otherReason)
			require.True(t, other.Replayed(), "another reason under the key is replayed the original's response")
			require.Equal(t, first.Body, other.Body)
			require.Equal(t, http.StatusUnprocessableEntity, e.Post(t, refunds, key, body(order, 5000)).Status, "another amount is still refused")
			require.Equal(t, 1, e.Count(t, "refunds", order))
		},
		"entity-blind": func(t *testing.T, e *servertest.Env, order, key string) {
			first := e.Post(t, refunds, key, body(order, 4900))
			second := servertest.Fresh("o-")
			other := e.Post(t, refunds, key, body(second, 4900))
			require.True(t, other.Replayed(), "the key reused for another order is replayed the first order's refund")
			require.Equal(t, first.Body, other.Body)
			require.Equal(t, 0, e.Count(t, "refunds", second), "the second order is never refunded")
			require.Equal(t, http.StatusUnprocessableEntity, e.Post(t, refunds, key, body(order, 5000)).Status, "another amount is still refused")
		},
	}
	for name, c := range wrapperFlawCases {
		cases[name] = c
	}
	for name, c := range vendorFlawCases {
		cases[name] = c
	}
	for _, f := range reference.Flaws() {
		t.Run(f.Name, func(t *testing.T) {
			if run, ok := storeFlawCases[f.Name]; ok {
				run(t)
				return
			}
			check, ok := cases[f.Name]
			require.True(t, ok, "flaw %s has no misbehaviour test", f.Name)
			opts := []reference.Option{reference.WithTestHooks(true), reference.WithRetention(flawRetention),
				reference.WithLockTimeout(flawLockTimeout), reference.WithFlaws(f.Name)}
			e := servertest.Start(t, memstore.New(), opts...)
			check(t, e, servertest.Fresh("o-"), servertest.Fresh("k-"))
		})
	}
	require.Len(t, cases, len(reference.Flaws())-len(storeFlawCases))
}

// The window and lock timeout every flaw test runs under (a manual clock moves time).
const (
	flawRetention   = 2 * time.Second
	flawLockTimeout = time.Second
)

func TestUnknownFlawListsTheValidOnes(t *testing.T) {
	_, err := reference.New(reference.WithFlaws("pin-5xx", "bogus"))
	require.ErrorContains(t, err, `unknown flaw "bogus"`)
	require.ErrorContains(t, err, "check-then-set")
	require.ErrorContains(t, err, "mismatch-overwrites")
}

// The catalogue is a contract (docs/scenario-ids.md): same flaws, same catching scenario,
// and every catching scenario is a listed ID.
func TestFlawCatalogueMatchesTheScenarioDoc(t *testing.T) {
	doc, err := os.ReadFile("../docs/scenario-ids.md")
	require.NoError(t, err)
	ids := map[string]bool{}
	documented := map[string]string{}
	section := ""
	for _, line := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(line, "## ") {
			section = line
		}
		cells := strings.Split(line, "|")
		if len(cells) < 4 || strings.HasPrefix(strings.TrimSpace(cells[1]), "-") {
			continue
		}
		first, last := strings.TrimSpace(cells[1]), strings.TrimSpace(cells[len(cells)-2])
		switch {
		case strings.HasPrefix(section, "## Flaws") && first != "flaw":
			documented[first] = last
		case section == "" && first != "ID":
			ids[first] = true
		}
	}
	require.NotEmpty(t, ids)
	for _, f := range reference.Flaws() {
		require.NotEmpty(t, f.Description)
		require.True(t, ids[f.CaughtBy], "flaw %s is caught by unknown scenario %q", f.Name, f.CaughtBy)
		require.Equal(t, documented[f.Name], f.CaughtBy, "flaw %s: the doc's catching scenario", f.Name)
	}
	for name := range documented {
		require.Contains(t, reference.FlawNames(), name, "documented flaw missing from the catalogue")
	}
}

// The README's flaw table is generated from Flaws() and must not drift (a flaw left out
// is a flaw a reader never hears of).
func TestReadmeFlawTable(t *testing.T) {
	var table strings.Builder
	table.WriteString("| flaw | models | caught by |\n|---|---|---|\n")
	for _, f := range reference.Flaws() {
		table.WriteString("| `" + f.Name + "` | " + strings.ReplaceAll(f.Description, "|", `\|`) + " | `" + f.CaughtBy + "` |\n")
	}
	doctest.RequireSection(t, "../README.md", "flaws", table.String(), "go test ./reference -run TestReadmeFlawTable")
}

package scenarios_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/verdict"
)

// ordersFirst is an API whose refunds need an order that exists: POST /v1/orders creates
// one ({"order": {"id": "ord_N"}}), and a refund of an unknown order is a 404 before any
// key is looked at. Everything else is the correct fake.
type ordersFirst struct {
	next    *fakeRefunds
	mu      sync.Mutex
	orders  map[string]bool
	created []string // the labels the setup's body carried, in order
}

func (o *ordersFirst) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/orders":
		var in struct {
			Label string `json:"label"`
		}
		_ = json.NewDecoder(r.Body).Decode(&in)
		o.mu.Lock()
		id := fmt.Sprintf("ord_%d", len(o.orders)+1)
		o.orders[id] = true
		o.created = append(o.created, in.Label)
		o.mu.Unlock()
		writeJSON(w, http.StatusCreated, map[string]any{"order": map[string]any{"id": id}})
		return
	case r.Method == http.MethodPost:
		raw, _ := io.ReadAll(r.Body)
		var in struct {
			OrderID string `json:"order_id"`
		}
		_ = json.Unmarshal(raw, &in)
		o.mu.Lock()
		known := o.orders[in.OrderID]
		o.mu.Unlock()
		if !known {
			writeJSON(w, http.StatusNotFound, map[string]any{"error": "no such order " + in.OrderID})
			return
		}
		r.Body = io.NopCloser(strings.NewReader(string(raw)))
	}
	o.next.ServeHTTP(w, r)
}

func ordersProfile(t *testing.T, url string) *profile.Profile {
	p := fakeProfile(t, url)
	p.EntitySetup = &profile.EntitySetup{Path: "/v1/orders", Body: `{"label": "{{.Entity}}"}`, ID: "order.id"}
	require.NoError(t, p.Validate())
	return p
}

// With entity_setup every scenario acts on an order it created first: the operation, the
// ledger and the side entities of the key sets all name created orders.
func TestEntitySetupCreatesEachScenariosEntity(t *testing.T) {
	t.Parallel()
	inner := &fakeRefunds{}
	startFake(t, inner)
	api := &ordersFirst{next: inner, orders: map[string]bool{}}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	rep, err := scenarios.Run(ctx, scenarios.RunConfig{Profiles: []*profile.Profile{ordersProfile(t, srv.URL)},
		Only: []string{"replay/sequential", "fingerprint/mismatch", "race/keepalive-many-keys"}, Seed: 1})
	require.NoError(t, err)
	for _, r := range rep.Results {
		requirePassOrUnrefusedBurst(t, r.ScenarioID, r)
		require.True(t, strings.HasPrefix(r.Evidence.Record.Entity, "ord_"), r.Evidence.Record.Entity)
	}
	keepAlive := result(t, rep, "race/keepalive-many-keys")
	require.Len(t, keepAlive.Evidence.Record.SideEntities, 40)
	for _, e := range keepAlive.Evidence.Record.SideEntities {
		require.True(t, strings.HasPrefix(e, "ord_"), e)
	}
	api.mu.Lock()
	defer api.mu.Unlock()
	require.Len(t, api.created, 1+3+40, "the preflight's, one per scenario, one per side entity")
}

// Without it, the same API answers every refund 404 (the order does not exist): no
// scenario can pass, which is what entity_setup is for.
func TestEntitySetupErrorsSayWhatToFix(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/orders" {
			writeJSON(w, http.StatusCreated, map[string]any{"id": "ord_1"})
			return
		}
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "nope"})
	}))
	t.Cleanup(srv.Close)
	p := ordersProfile(t, srv.URL) // the id is at order.id; this API puts it at id
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := scenarios.Run(ctx, scenarios.RunConfig{Profiles: []*profile.Profile{p}, Only: []string{"replay/sequential"}, Seed: 1})
	var pf *scenarios.PreflightError
	require.ErrorAs(t, err, &pf)
	require.Equal(t, "entity_setup", pf.Field)
	require.Contains(t, err.Error(), "entity_setup.id order.id: nothing usable at that path")

	p.EntitySetup.Path = "v1/orders"
	p.EntitySetup.ID = ""
	err = p.Validate()
	require.ErrorContains(t, err, "entity_setup.path: must be a path on base_url starting with /")
	require.ErrorContains(t, err, "entity_setup.id: must be a JSON path")
}

// A setup request a rate limit refuses is sent again after its Retry-After.
func TestEntitySetupWaitsOutARateLimit(t *testing.T) {
	t.Parallel()
	inner := &fakeRefunds{}
	startFake(t, inner)
	api := &ordersFirst{next: inner, orders: map[string]bool{}}
	var mu sync.Mutex
	refused := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		first := r.URL.Path == "/v1/orders" && refused == 0
		if first {
			refused++
		}
		mu.Unlock()
		if first {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		api.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	r := runOn(t, ordersProfile(t, srv.URL), "replay/sequential")["replay/sequential"]
	require.Equal(t, verdict.Pass, r.Verdict, r.Message)
	require.Equal(t, 1, refused)
}

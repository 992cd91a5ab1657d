package containers_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/types"
)

// principal is the reference server's first built-in bearer token (its profile's first
// principal).
const principal = "Bearer idemproof-a"

// refundBody is the reference operation's payload for one order.
func refundBody(order string) []byte {
	return fmt.Appendf(nil, `{"order_id": %q, "amount": 4900, "reason": "requested_by_customer"}`, order)
}

// fresh mints a unique name: keys and orders are never reused across runs, so a second
// run inside the retention window cannot see the first one's records.
func fresh(prefix string) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return prefix + "-" + hex.EncodeToString(b)
}

// answer is one attempt's outcome: a response (Status > 0) or a transport error.
type answer struct {
	Status   int
	Body     []byte
	Replayed bool
	Err      error
}

func (a answer) String() string {
	if a.Err != nil {
		return "transport error: " + a.Err.Error()
	}
	return fmt.Sprintf("%d %s", a.Status, bytes.TrimSpace(a.Body))
}

// newHTTPClient returns a client whose every attempt is visible: keep-alives off, so Go's
// transport never silently resends a keyed request on a broken idle connection.
func newHTTPClient(timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout:   timeout,
		Transport: &http.Transport{DisableKeepAlives: true},
	}
}

// postRefund sends one attempt of the refund operation with the given key.
func postRefund(ctx context.Context, hc *http.Client, base, key, order string, extra map[string]string) answer {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/refunds", bytes.NewReader(refundBody(order)))
	if err != nil {
		return answer{Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", principal)
	req.Header.Set("Idempotency-Key", key)
	for k, v := range extra {
		req.Header.Set(k, v)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return answer{Err: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return answer{Status: resp.StatusCode, Err: fmt.Errorf("read body: %w", err)}
	}
	return answer{Status: resp.StatusCode, Body: body, Replayed: resp.Header.Get("Idempotent-Replayed") == "true"}
}

// ledgerCount asks the server's ledger endpoint how many refunds exist for an order.
func ledgerCount(ctx context.Context, hc *http.Client, base, order string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/refunds?order_id="+order, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", principal)
	resp, err := hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("read ledger: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return 0, fmt.Errorf("read ledger: status %d: %s", resp.StatusCode, b)
	}
	var v struct {
		Count *int `json:"count"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		return 0, fmt.Errorf("read ledger: %w", err)
	}
	if v.Count == nil {
		return 0, fmt.Errorf("read ledger: no \"count\" field in the answer")
	}
	return *v.Count, nil
}

// beSuccess matches a 2xx status.
func beSuccess() types.GomegaMatcher {
	return And(BeNumerically(">=", 200), BeNumerically("<", 300))
}

package clientcheck

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
)

// readLedger counts the refunds of each operation by asking the reference handler
// directly (in-process, no network, no faults): GET /v1/refunds?order_id=X → count.
func readLedger(h http.Handler, ops []string) (map[string]int, error) {
	out := make(map[string]int, len(ops))
	for _, op := range ops {
		req := httptest.NewRequest(http.MethodGet, OperationPath+"?order_id="+url.QueryEscape(op), nil)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			return out, fmt.Errorf("read ledger of %s: status %d: %s", op, rec.Code, rec.Body.String())
		}
		var page struct {
			Count *int `json:"count"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil || page.Count == nil {
			return out, fmt.Errorf("read ledger of %s: want {\"count\":N}, got %s", op, rec.Body.String())
		}
		out[op] = *page.Count
	}
	return out, nil
}

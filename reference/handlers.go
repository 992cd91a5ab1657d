package reference

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/idemproof/idemproof/reference/idempotency"
)

// MaxRefundAmount is the business limit: a larger refund is executed and refused (402).
const MaxRefundAmount = 1_000_000

// operation is one keyed endpoint and the ledger that counts its effects.
type operation struct {
	kind      string // effect kind: "refund", "invoice"
	path      string
	idPrefix  string
	hasReason bool
	limit     int64 // 0: no business limit
}

var (
	refundOperation  = operation{kind: "refund", path: "/v1/refunds", idPrefix: "re_", hasReason: true, limit: MaxRefundAmount}
	invoiceOperation = operation{kind: "invoice", path: "/v1/invoices", idPrefix: "in_"}
)

// resource is a refund or an invoice as the API renders it.
type resource struct {
	ID      string  `json:"id"`
	OrderID string  `json:"order_id"`
	Amount  int64   `json:"amount"`
	Reason  *string `json:"reason,omitempty"`
	Created int64   `json:"created"`
}

type createRequest struct {
	OrderID *string         `json:"order_id"`
	Amount  json.RawMessage `json:"amount"`
	Reason  string          `json:"reason"`
}

// createInput is a create request as the work sees it, validated.
type createInput struct {
	OrderID string
	Amount  int64
	Reason  string
}

// decodeCreate decodes and validates a create body; the string is the validation
// failure to answer 400 with (empty when the input is good).
func decodeCreate(body io.Reader) (createInput, string) {
	var req createRequest
	if err := json.NewDecoder(body).Decode(&req); err != nil {
		return createInput{}, "the body must be a JSON object like {\"order_id\":\"o1\",\"amount\":4900}: " + err.Error()
	}
	if req.OrderID == nil || *req.OrderID == "" {
		return createInput{}, "order_id is required: send the id of the order as a non-empty string"
	}
	amount, ok := positiveInteger(req.Amount)
	if !ok {
		return createInput{}, "amount must be a positive integer in the smallest currency unit, e.g. 4900"
	}
	return createInput{OrderID: *req.OrderID, Amount: amount, Reason: req.Reason}, ""
}

// create is the work of a keyed endpoint. It never writes to the store: it stages the
// row, and the idempotency middleware commits it with the response. local: the
// middleware runs it on the one-transaction path, which holds the delay hook itself.
func (s *Server) create(op operation, local bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		req, problem := decodeCreate(r.Body)
		if problem != "" {
			idempotency.NotExecuted(ctx)
			invalid(w, problem)
			return
		}
		amount := req.Amount

		hooks := hooksOf(ctx)
		if !local {
			hold(hooks.delay)
		}
		if op.limit > 0 && amount > op.limit {
			// A business refusal is an executed outcome: no row, but the answer is stored.
			idempotency.WriteProblem(w, http.StatusPaymentRequired, "refund-limit-exceeded", "Refund limit exceeded",
				fmt.Sprintf("amount %d is above the limit of %d: refund at most %d per request", amount, op.limit, op.limit))
			return
		}
		res := resource{ID: newID(op.idPrefix), OrderID: req.OrderID, Amount: amount, Created: s.cfg.now().Unix()}
		if op.hasReason {
			reason := req.Reason
			res.Reason = &reason
		}
		body, _ := json.Marshal(res)
		idempotency.Stage(ctx, idempotency.Effect{
			Kind: op.kind, ID: res.ID, Entity: res.OrderID, Principal: principalOf(r), Data: body, Created: s.cfg.now(),
		})
		s.stageNotification(r, op, res) // committed with the refund, or not at all (vendor.go)
		if hooks.fail != 0 {
			if local {
				// The one-transaction path holds the delay inside the transaction, which a
				// failed request never opens: slow work that then fails is held here.
				hold(hooks.delay)
			}
			// The work started (a row is staged); failing now makes the middleware roll it back.
			idempotency.WriteProblem(w, hooks.fail, "work-failed", "The work failed",
				"the operation failed after it started and was rolled back: retry with the same key")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Location", op.path+"/"+res.ID)
		w.WriteHeader(http.StatusCreated)
		w.Write(body)
	}
}

// positiveInteger accepts any JSON number spelling of a positive integer (4900, 4900.0,
// 4.9e3) that fits in int64, in time linear in the spelling: 1e999999999 is refused
// without computing it.
func positiveInteger(raw json.RawMessage) (int64, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] == '"' || raw[0] == '{' || raw[0] == '[' {
		return 0, false
	}
	if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return n, n > 0 // the common spelling
	}
	// The canonical spelling of an integer below 10^21 is its plain digits.
	canonical, err := idempotency.CanonicalNumber(raw)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(canonical, 10, 64)
	return n, err == nil && n > 0
}

func invalid(w http.ResponseWriter, detail string) {
	idempotency.WriteProblem(w, http.StatusBadRequest, "validation-failed", "Invalid request", detail+"; the request was not executed, so the same key may be reused")
}

func newID(prefix string) string {
	var b [12]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// ledger lists the effects of an entity, across principals: the side-effect probe.
func (s *Server) ledger(op operation) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		entity := r.URL.Query().Get("order_id")
		if entity == "" {
			idempotency.WriteProblem(w, http.StatusBadRequest, "validation-failed", "order_id missing",
				"query the ledger with ?order_id=<order id>")
			return
		}
		effects, err := s.appStore.Effects(r.Context(), op.kind, entity)
		if err != nil {
			w.Header().Set("Retry-After", "1")
			idempotency.WriteProblem(w, http.StatusServiceUnavailable, "store-unavailable", "Store unavailable", "the ledger could not be read: retry")
			return
		}
		data := make([]json.RawMessage, 0, len(effects))
		for _, e := range effects {
			data = append(data, json.RawMessage(e.Data))
		}
		writeJSON(w, http.StatusOK, ledgerPage{Data: data, Count: len(data)})
	}
}

// fetch answers GET <path>/{id}, what a create's Location names: the object's exact bytes,
// to its own principal only. Another principal gets the same 404 as a wrong id, so ids
// reveal nothing across principals.
func (s *Server) fetch(op operation) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		e, ok, err := s.appStore.Effect(r.Context(), op.kind, id)
		if err != nil {
			w.Header().Set("Retry-After", "1")
			idempotency.WriteProblem(w, http.StatusServiceUnavailable, "store-unavailable", "Store unavailable",
				"the "+op.kind+" could not be read: retry")
			return
		}
		if !ok || e.Principal != principalOf(r) {
			idempotency.WriteProblem(w, http.StatusNotFound, "not-found", "No such "+op.kind,
				fmt.Sprintf("no %s %q exists for this principal: use the id from the Location header of the create response, with the same credentials", op.kind, id))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.Write(e.Data)
	}
}

// ledgerPage is the ledger's answer: {"data":[...],"count":N}.
type ledgerPage struct {
	Data  []json.RawMessage `json:"data"`
	Count int               `json:"count"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "encode response", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

package reference

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/idemproof/idemproof/reference/idempotency"
	"github.com/idemproof/idemproof/reference/outbox"
)

// The vendor boundary: with WithVendorURL, a refund notifies a vendor with
// POST /v1/notifications {"order_id","refund_id","amount"}, carrying an Idempotency-Key
// derived from the request's key and principal. The call is a job staged with the
// refund (idempotency.Stage), so the middleware commits both in one transaction, and
// reference/outbox delivers it after the request, retrying under the same key. A replay
// stages nothing, a refused request (409, 422, 400) stages nothing, a 5xx rolls the job
// back with the refund.

// VendorPath is where the notification goes on the vendor.
const VendorPath = "/v1/notifications"

// Vendor flaw names.
const (
	flawVendorUnkeyed   = "vendor-call-unkeyed"
	flawVendorInRequest = "vendor-call-in-request"
)

// vendorFlaws are the boundary flaws; they change the vendor call only, so apply does
// nothing, and without a vendor URL they do nothing at all.
func vendorFlaws() []Flaw {
	none := func(*idempotency.Flaws) {}
	return []Flaw{
		{flawVendorUnkeyed, "the refund's vendor notification carries no key: when the vendor's answer is lost, the outbox re-drives it and the vendor notifies twice", "boundary/retry-same-downstream-key", none},
		{flawVendorInRequest, "the vendor is called inside the request right after the commit, not from a committed job: a crash between the two loses the call, and nothing retries it", "boundary/crash-between-commit-and-call", none},
	}
}

// WithVendorURL makes refunds notify the vendor at url (see VendorPath). The store must
// be able to list pending jobs (outbox.Lister): the memory and PostgreSQL stores can.
func WithVendorURL(url string) Option {
	return func(c *config) error { c.vendorURL = url; return nil }
}

func (s *Server) hasFlaw(name string) bool { return slices.Contains(s.cfg.flawNames, name) }

// startVendor starts the outbox worker when a vendor is configured (and the in-request
// flaw does not bypass it).
func (s *Server) startVendor() error {
	if s.cfg.vendorURL == "" || s.hasFlaw(flawVendorInRequest) {
		return nil
	}
	st, ok := s.store.(outbox.Store)
	if !ok {
		return fmt.Errorf("vendor %s: the store %T cannot list pending jobs (outbox.Lister)", s.cfg.vendorURL, s.store)
	}
	w, err := outbox.Start(outbox.Config{Store: st, VendorURL: s.cfg.vendorURL, Logger: s.cfg.logger})
	if err != nil {
		return err
	}
	s.outbox = w
	return nil
}

// vendorKey is the downstream key of a request: derived from its principal and its
// Idempotency-Key, so every re-drive of the call carries the same one.
func vendorKey(principal, key string) string {
	var b []byte
	for _, part := range []string{"refund-notification", principal, key} {
		b = binary.AppendUvarint(b, uint64(len(part)))
		b = append(b, part...)
	}
	sum := sha256.Sum256(b)
	return "refund-notify-" + hex.EncodeToString(sum[:16])
}

// notification is the vendor job of a refund.
func (s *Server) notification(r *http.Request, res resource) outbox.Job {
	body, _ := json.Marshal(map[string]any{"order_id": res.OrderID, "refund_id": res.ID, "amount": res.Amount})
	job := outbox.Job{Path: VendorPath, Key: vendorKey(principalOf(r), r.Header.Get(idempotency.HeaderKey)), Body: body}
	if s.hasFlaw(flawVendorUnkeyed) {
		job.Key = ""
	}
	return job
}

// stageNotification stages the refund's vendor job with the refund, when a vendor is
// configured and the job is committed by the middleware (not the in-request flaw).
func (s *Server) stageNotification(r *http.Request, op operation, res resource) {
	if s.cfg.vendorURL == "" || op.kind != refundOperation.kind || s.hasFlaw(flawVendorInRequest) {
		return
	}
	idempotency.Stage(r.Context(), outbox.Effect("vn_"+res.ID, res.OrderID, principalOf(r), s.notification(r, res), s.cfg.now()))
}

// wrapVendor wraps the keyed refund endpoint: it wakes the outbox worker once the
// middleware has committed, or, with the in-request flaw, calls the vendor itself right
// after a fresh (not replayed) success. A request that crashed never gets here.
func (s *Server) wrapVendor(op operation, next http.Handler) http.Handler {
	if s.cfg.vendorURL == "" || op.kind != refundOperation.kind {
		return next
	}
	if !s.hasFlaw(flawVendorInRequest) {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r)
			if s.outbox != nil {
				s.outbox.Kick()
			}
		})
	}
	client := &http.Client{Timeout: 5 * time.Second}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &bodyRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		if rec.status < 200 || rec.status > 299 || w.Header().Get(idempotency.HeaderReplayed) != "" {
			return
		}
		var res resource
		if json.Unmarshal(rec.body, &res) != nil || res.ID == "" {
			return
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 5*time.Second)
		defer cancel()
		if err := outbox.Send(ctx, client, s.cfg.vendorURL, idempotency.HeaderKey, s.notification(r, res)); err != nil {
			s.cfg.logger.Warn("reference: vendor call in the request failed; nothing retries it", "err", err)
		}
	})
}

// bodyRecorder keeps the status and the start of the body a handler wrote.
type bodyRecorder struct {
	http.ResponseWriter
	status int
	body   []byte
}

func (b *bodyRecorder) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
	b.ResponseWriter.WriteHeader(code)
}

func (b *bodyRecorder) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	if room := 64<<10 - len(b.body); room > 0 {
		b.body = append(b.body, p[:min(room, len(p))]...)
	}
	return b.ResponseWriter.Write(p)
}

func (b *bodyRecorder) Unwrap() http.ResponseWriter { return b.ResponseWriter }

// Package outbox delivers the reference server's calls to its vendor as transactionally
// staged jobs (brandur's pattern): the request that refunds also stages a job, and the
// idempotency middleware commits the job with the refund and the stored response in ONE
// transaction; this worker then calls the vendor, outside any request.
//
//	request ──> refund row + job row + stored response (one transaction)
//	worker  ──> pending jobs ──> POST vendor, Idempotency-Key: the job's key ──> done marker
//
// Guarantees:
//
//   - A committed refund has its job: a crash after the commit cannot lose the call
//     (the worker finds the job on its next sweep, in this process or, on PostgreSQL, in
//     the next one); a refund that never committed has no job, so it calls nobody.
//   - Every delivery attempt of a job carries the job's key, derived from the request's
//     key and principal: the vendor sees a re-drive (a 5xx, a lost answer, a restart
//     before the done marker) as a repeat of one call, never a second one.
//   - A replay of the API request stages nothing, so it calls nobody.
//
// Not guaranteed: exactly-once delivery (it is at least once; the key makes the vendor's
// effect happen once), ordering between jobs, or delivery while the vendor keeps
// failing (the job stays pending and is retried with backoff, up to MaxBackoff apart).
package outbox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/idemproof/idemproof/reference/idempotency"
)

// Effect kinds in the store: a staged job, and the marker of its delivery.
const (
	JobKind  = "vendor-notification"
	DoneKind = "vendor-delivered"
)

// Sweep bounds.
const (
	DefaultInterval = 100 * time.Millisecond
	MinBackoff      = 50 * time.Millisecond
	MaxBackoff      = 2 * time.Second
	batch           = 100
)

// Job is what a staged job asks the worker to send.
type Job struct {
	Path string          `json:"path"`          // e.g. /v1/notifications
	Key  string          `json:"key,omitempty"` // the downstream Idempotency-Key ("" = none: the unkeyed flaw)
	Body json.RawMessage `json:"body"`
}

// Effect stages job as a store effect of the entity: pass it to idempotency.Stage with
// the refund, so both commit (or neither) with the stored response.
func Effect(id, entity, principal string, job Job, now time.Time) idempotency.Effect {
	data, _ := json.Marshal(job)
	return idempotency.Effect{Kind: JobKind, ID: id, Entity: entity, Principal: principal, Data: data, Created: now}
}

// DoneID is the id of the delivery marker of a job.
func DoneID(jobID string) string { return "done:" + jobID }

// Lister is the store ability the worker needs besides idempotency.Store: the effects of
// kind with no effect of doneKind whose id is DoneID of theirs, oldest first.
type Lister interface {
	PendingEffects(ctx context.Context, kind, doneKind string, limit int) ([]idempotency.Effect, error)
}

// Store is what the worker reads and writes.
type Store interface {
	idempotency.Store
	Lister
}

// Config configures Start.
type Config struct {
	Store     Store
	VendorURL string // base URL, e.g. http://127.0.0.1:9090
	// KeyHeader carries the job's key (default Idempotency-Key).
	KeyHeader string
	Client    *http.Client // default: 5 s timeout
	Interval  time.Duration
	Logger    *slog.Logger
}

// Worker sweeps pending jobs and delivers them.
type Worker struct {
	cfg  Config
	kick chan struct{}
	stop chan struct{}
	done sync.WaitGroup
	once sync.Once
	// retry is when a failed job may be tried again, and its current backoff.
	retry map[string]backoff
}

type backoff struct {
	at   time.Time
	wait time.Duration
}

// Start starts the worker.
func Start(cfg Config) (*Worker, error) {
	if cfg.Store == nil || cfg.VendorURL == "" {
		return nil, fmt.Errorf("outbox: a store and a vendor URL are required")
	}
	if cfg.KeyHeader == "" {
		cfg.KeyHeader = idempotency.HeaderKey
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 5 * time.Second}
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	cfg.VendorURL = strings.TrimRight(cfg.VendorURL, "/")
	w := &Worker{cfg: cfg, kick: make(chan struct{}, 1), stop: make(chan struct{}), retry: map[string]backoff{}}
	w.done.Add(1)
	go w.loop()
	return w, nil
}

// Kick asks for a sweep now (a request just committed); it never blocks.
func (w *Worker) Kick() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// Close stops the worker; pending jobs stay pending in the store.
func (w *Worker) Close() {
	w.once.Do(func() { close(w.stop); w.done.Wait() })
}

func (w *Worker) loop() {
	defer w.done.Done()
	t := time.NewTicker(w.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-w.kick:
		case <-t.C:
		}
		w.sweep()
	}
}

// sweep delivers every pending job that is not backing off.
func (w *Worker) sweep() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	jobs, err := w.cfg.Store.PendingEffects(ctx, JobKind, DoneKind, batch)
	if err != nil {
		w.cfg.Logger.Warn("outbox: list pending jobs", "err", err)
		return
	}
	now := time.Now()
	for _, e := range jobs {
		if b, ok := w.retry[e.ID]; ok && now.Before(b.at) {
			continue
		}
		select {
		case <-w.stop:
			return
		default:
		}
		if err := w.deliver(ctx, e); err != nil {
			b := w.retry[e.ID]
			b.wait = min(max(2*b.wait, MinBackoff), MaxBackoff)
			b.at = time.Now().Add(b.wait)
			w.retry[e.ID] = b
			w.cfg.Logger.Warn("outbox: deliver job, will retry with the same key", "job", e.ID, "err", err, "in", b.wait)
			continue
		}
		delete(w.retry, e.ID)
	}
}

// deliver sends one job and marks it done on a 2xx.
func (w *Worker) deliver(ctx context.Context, e idempotency.Effect) error {
	var job Job
	if err := json.Unmarshal(e.Data, &job); err != nil {
		return fmt.Errorf("decode job: %w", err)
	}
	if err := Send(ctx, w.cfg.Client, w.cfg.VendorURL, w.cfg.KeyHeader, job); err != nil {
		return err
	}
	done := idempotency.Effect{Kind: DoneKind, ID: DoneID(e.ID), Entity: e.Entity, Principal: e.Principal, Data: []byte(`{}`), Created: time.Now()}
	if err := w.cfg.Store.CommitEffects(ctx, []idempotency.Effect{done}); err != nil {
		// Delivered but not marked: the next sweep re-sends it under the same key.
		return fmt.Errorf("mark delivered: %w", err)
	}
	return nil
}

// Send makes one vendor call of job: POST base+job.Path with the job's key (none when it
// has none); a non-2xx answer is an error.
func Send(ctx context.Context, client *http.Client, base, keyHeader string, job Job) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+job.Path, bytes.NewReader(job.Body))
	if err != nil {
		return fmt.Errorf("build vendor call: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if job.Key != "" {
		req.Header.Set(keyHeader, job.Key)
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("call vendor: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("call vendor: %s", resp.Status)
	}
	return nil
}

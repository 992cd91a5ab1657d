package reference

import (
	"io"
	"net/http"
	"sync"
	"time"
)

// DefaultBodyTimeout is how long a client has to send a whole request body.
const DefaultBodyTimeout = 60 * time.Second

// limitBodyTime gives the request's body until d from now to arrive: a read after that
// fails with a timeout, which the idempotency middleware answers 408 before anything is
// recorded. The deadline is lifted once the body ended, so Go's server's background read
// of the connection (it ends the request's context on an error) does not inherit it.
// A connection that allows no deadline (a test recorder) gets none.
func limitBodyTime(w http.ResponseWriter, r *http.Request, d time.Duration) {
	if d <= 0 || r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return
	}
	rc := http.NewResponseController(w)
	if rc.SetReadDeadline(time.Now().Add(d)) != nil {
		return
	}
	r.Body = &deadlineBody{ReadCloser: r.Body, clear: func() { rc.SetReadDeadline(time.Time{}) }}
}

type deadlineBody struct {
	io.ReadCloser
	once  sync.Once
	clear func()
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.once.Do(b.clear)
	}
	return n, err
}

package faultproxy

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"io"
	"net/http"
	"sync"
	"time"
)

// emptySHA256 is the fingerprint of an empty body, precomputed so bodyless requests do
// not pay for a hash.
const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// requestBody is the client's request body as the proxy consumes it: every byte read is
// hashed for Record.BodySHA256, whether it is streamed upstream or buffered.
//
// Reads and the hash are guarded by mu: when the upstream answers before it has read the
// whole body, the Transport's writer may still be reading while the handler finishes.
type requestBody struct {
	mu       sync.Mutex
	src      io.ReadCloser
	length   int64 // the client's Content-Length; -1 when unknown (chunked)
	h        hash.Hash
	buf      []byte // buffered prefix of the body
	complete bool   // buf holds the whole body
	eof      bool
	streamed bool  // the unbuffered rest was handed out for forwarding
	err      error // the first read error other than EOF: the client's body failed
	// deadline is the client connection whose read deadline limitTime set; it is lifted
	// once the body ended.
	deadline readDeadliner
}

func newRequestBody(src io.ReadCloser, length int64) *requestBody {
	b := &requestBody{src: src, length: length}
	if src == nil || src == http.NoBody || length == 0 {
		b.complete, b.eof = true, true
	}
	return b
}

func (b *requestBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.eof {
		return 0, io.EOF
	}
	n, err := b.src.Read(p)
	if n > 0 {
		if b.h == nil {
			b.h = sha256.New()
		}
		b.h.Write(p[:n])
	}
	switch {
	case err == io.EOF:
		b.eof = true
		if b.deadline != nil {
			// Go's server starts its background read of the connection now; it must
			// not inherit the body's deadline (it would end the request's context).
			b.deadline.SetReadDeadline(time.Time{})
			b.deadline = nil
		}
	case err != nil && b.err == nil:
		b.err = err
	}
	return n, err
}

// limitTime gives the client until d from now to send the whole body: a read after that
// fails with a timeout (recorded in err). Where the connection allows no deadline (a test
// recorder), there is none.
func (b *requestBody) limitTime(w http.ResponseWriter, d time.Duration) {
	dl := readDeadlineOf(w)
	if dl == nil || dl.SetReadDeadline(time.Now().Add(d)) != nil {
		return
	}
	b.deadline = dl
}

type readDeadliner interface{ SetReadDeadline(time.Time) error }

// readDeadlineOf finds what sets the connection's read deadline behind w, unwrapping
// like http.ResponseController does but without its allocation on every request.
func readDeadlineOf(w http.ResponseWriter) readDeadliner {
	for {
		switch t := w.(type) {
		case readDeadliner:
			return t
		case interface{ Unwrap() http.ResponseWriter }:
			w = t.Unwrap()
		default:
			return nil
		}
	}
}

// failure is the client's body error, if the body failed.
func (b *requestBody) failure() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

// bufferAll reads the body into memory up to limit bytes and reports whether it all fit.
func (b *requestBody) bufferAll(limit int64) bool {
	if b.complete {
		return true
	}
	if b.streamed {
		return false
	}
	// The buffer grows with the bytes that arrive, never with the length a client only
	// announces (that would let idle clients reserve BufferLimit each).
	var w bytes.Buffer
	w.Write(b.buf)
	_, err := io.Copy(&w, io.LimitReader(b, limit+1-int64(len(b.buf))))
	b.buf = w.Bytes()
	if err == nil && int64(len(b.buf)) <= limit {
		// LimitReader stops at the limit without reading EOF; one more read settles it.
		if !b.eof {
			var one [1]byte
			if n, _ := b.Read(one[:]); n > 0 {
				b.buf = append(b.buf, one[0])
				return false
			}
		}
		b.complete = b.eof
	}
	return b.complete
}

// smallBody is the largest request body readAvailable takes in one read: the size of the
// Go server's connection read buffer, which holds a small body that arrived with its
// request headers.
const smallBody = 4 << 10

// chunkedPrefix is how much of a body of unknown length (chunked) is read before the
// upstream call: a small chunked body is forwarded complete, with a Content-Length, and
// one that is malformed or stalls fails before the upstream sees anything.
const chunkedPrefix = 64 << 10

// readAvailable makes one read of a small body of known length before it is forwarded.
// When that read returns the whole body — it came in the same packets as the headers, as
// it does from most clients — forwardBody hands out an in-memory reader: the call can
// take the direct client (upstream_direct.go), and either client writes it together with
// the request headers in one write (http.Transport flushes the headers of a streamed
// body on their own first: one more syscall on each side per attempt). Otherwise what
// was read becomes the buffered prefix and the rest still streams. A client announcing
// "Expect: 100-continue" is left alone (reading would answer it). The upstream now sees
// the request once its first body bytes arrived, not already after the headers.
//
// A body of unknown length (chunked) is read up to chunkedPrefix instead: whole when it
// ends by then, else the prefix is buffered and the rest streams.
func (b *requestBody) readAvailable(expect bool) {
	if b.complete || b.streamed || len(b.buf) > 0 || expect {
		return
	}
	if b.length < 0 {
		buf := make([]byte, 0, 4<<10)
		for len(buf) < chunkedPrefix {
			if len(buf) == cap(buf) {
				buf = append(buf, 0)[:len(buf)]
			}
			n, err := b.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+n]
			if err != nil {
				b.complete = err == io.EOF
				break
			}
		}
		b.buf = buf
		return
	}
	if b.length == 0 || b.length > smallBody {
		return
	}
	buf := make([]byte, b.length)
	n, _ := b.Read(buf)
	b.buf = buf[:n]
	if int64(n) == b.length {
		// The body is exactly its Content-Length; the server's reader already reports
		// EOF with the last byte, and a longer one cannot be read.
		b.complete = true
	}
}

// forwardBody returns what to send upstream: the buffered body (repeatable), or the
// buffered prefix followed by the unread rest (once). nil means "no body".
func (b *requestBody) forwardBody() (io.Reader, int64) {
	if b.complete {
		if len(b.buf) == 0 {
			return nil, 0
		}
		return bytes.NewReader(b.buf), int64(len(b.buf))
	}
	b.streamed = true
	if len(b.buf) == 0 {
		return b, b.length
	}
	return io.MultiReader(bytes.NewReader(b.buf), b), b.length
}

// drain reads what is left (up to limit) so the fingerprint covers the body even when it
// never went upstream, and so the server notices a client that goes away.
func (b *requestBody) drain(limit int64) {
	b.mu.Lock()
	eof := b.eof
	b.mu.Unlock()
	if !eof {
		io.Copy(io.Discard, io.LimitReader(b, limit))
	}
}

// sum is the hex SHA-256 of the bytes read so far (the whole body once drained).
func (b *requestBody) sum() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.h == nil {
		return emptySHA256
	}
	return hex.EncodeToString(b.h.Sum(nil))
}

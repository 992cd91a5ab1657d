package reference

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/idemproof/idemproof/reference/idempotency"
)

// Test hook headers (only with WithTestHooks).
const (
	HeaderTestDelay  = "X-Test-Delay" // Go duration: hold the work after the key insert
	HeaderTestFail   = "X-Test-Fail"  // a 5xx status: the work starts, then fails with it
	HeaderTestCrash  = "X-Test-Crash" // after-key | after-commit: abandon the request there
	crashAfterKey    = "after-key"
	crashAfterCommit = "after-commit"
	maxTestDelay     = time.Minute
	// CrashExitCode is the process exit status of a crash with WithCrashExits.
	CrashExitCode = 3
)

type testHooks struct {
	delay time.Duration
	fail  int
	crash string
}

type hooksKey struct{}

func hooksOf(ctx context.Context) testHooks {
	h, _ := ctx.Value(hooksKey{}).(testHooks)
	return h
}

// parseHooks reads the test hook headers before the key is touched, so a malformed
// hook is a plain 400 that records nothing.
func (s *Server) parseHooks(next http.Handler) http.Handler {
	if !s.cfg.testHooks {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var h testHooks
		if v := r.Header.Get(HeaderTestDelay); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 || d > maxTestDelay {
				badHook(w, HeaderTestDelay, fmt.Sprintf("send a Go duration between 0 and %v, e.g. 400ms", maxTestDelay))
				return
			}
			h.delay = d
		}
		if v := r.Header.Get(HeaderTestFail); v != "" {
			code, err := strconv.Atoi(v)
			if err != nil || code < 500 || code > 599 {
				badHook(w, HeaderTestFail, "send a 5xx status, e.g. 503")
				return
			}
			h.fail = code
		}
		if v := r.Header.Get(HeaderTestCrash); v != "" {
			if v != crashAfterKey && v != crashAfterCommit {
				badHook(w, HeaderTestCrash, "send after-key or after-commit")
				return
			}
			h.crash = v
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), hooksKey{}, h)))
	})
}

func badHook(w http.ResponseWriter, header, detail string) {
	idempotency.WriteProblem(w, http.StatusBadRequest, "test-hook-invalid", header+" invalid", detail)
}

// crashAt returns the middleware hook that crashes at point when the request asks for it.
func (s *Server) crashAt(point string) func(*http.Request) {
	return func(r *http.Request) {
		if hooksOf(r.Context()).crash != point {
			return
		}
		if s.cfg.crashExits {
			os.Exit(CrashExitCode)
		}
		// The standard server closes the connection without a response and without
		// logging a stack: exactly a process that died mid-request, seen from the client.
		panic(http.ErrAbortHandler)
	}
}

// afterKey is the middleware's AfterKey hook. On the one-transaction path (local) the
// handler runs before the key is taken, so the delay is held here, inside the
// transaction that holds the key's lock, where the two-phase path holds it in the handler.
func (s *Server) afterKey(local bool) func(*http.Request) {
	crash := s.crashAt(crashAfterKey)
	if !local {
		return crash
	}
	return func(r *http.Request) {
		hold(hooksOf(r.Context()).delay)
		crash(r)
	}
}

// hold sleeps for the delay hook. It ignores the request's cancellation on purpose: a
// real server keeps working after the client hangs up.
func hold(d time.Duration) {
	if d > 0 {
		t := time.NewTimer(d)
		<-t.C
	}
}

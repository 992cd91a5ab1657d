package stdio

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"
)

// ServeFunc is a server run in-process instead of started as a program: it reads
// requests from stdin and writes answers to stdout until stdin ends or ctx is done (the
// layer's kill), then returns. Its state outlives a kill, as a durable store's would;
// the session is what ends.
type ServeFunc func(ctx context.Context, stdin io.Reader, stdout io.Writer) error

// server is what a session speaks to: a Process, or an inProcess server.
type server interface {
	Stdin() io.WriteCloser
	Stdout() io.Reader
	Done() <-chan struct{}
	Exit() string
	Killed() bool
	Stderr() string
	Kill()
	Stop(grace time.Duration)
	reap()
}

var (
	_ server = (*Process)(nil)
	_ server = (*inProcess)(nil)
)

// inProcess runs a ServeFunc over two pipes.
type inProcess struct {
	cancel   context.CancelFunc
	inR      *io.PipeReader
	inW      *io.PipeWriter
	outR     *io.PipeReader
	outW     *io.PipeWriter
	done     chan struct{}
	err      error
	mu       sync.Mutex
	killed   bool
	stopOnce sync.Once
}

func launch(serve ServeFunc) *inProcess {
	ctx, cancel := context.WithCancel(context.Background())
	s := &inProcess{cancel: cancel, done: make(chan struct{})}
	s.inR, s.inW = io.Pipe()
	s.outR, s.outW = io.Pipe()
	go func() {
		defer close(s.done)
		s.err = serve(ctx, s.inR, s.outW)
		s.outW.Close() // its output ends when it returns, as a process's does
	}()
	return s
}

func (s *inProcess) Stdin() io.WriteCloser { return s.inW }
func (s *inProcess) Stdout() io.Reader     { return s.outR }
func (s *inProcess) Done() <-chan struct{} { return s.done }
func (s *inProcess) Stderr() string        { return "" }

func (s *inProcess) Exit() string {
	select {
	case <-s.done:
	default:
		return ""
	}
	if s.err != nil && !errors.Is(s.err, context.Canceled) {
		return "returned: " + s.err.Error()
	}
	return "returned"
}

func (s *inProcess) Killed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.killed
}

// Kill ends the server at once: its context is cancelled and its pipes closed, so it
// can neither read another request nor deliver another answer.
func (s *inProcess) Kill() {
	s.mu.Lock()
	s.killed = true
	s.mu.Unlock()
	s.end()
}

func (s *inProcess) end() {
	s.stopOnce.Do(func() {
		s.cancel()
		s.inR.CloseWithError(io.EOF)
		s.outW.CloseWithError(io.EOF)
	})
	<-s.done
}

// Stop closes its stdin and gives it grace to return; then it is ended.
func (s *inProcess) Stop(grace time.Duration) {
	s.inW.Close()
	select {
	case <-s.done:
	case <-time.After(grace):
	}
	s.end()
}

func (s *inProcess) reap() { s.end() }

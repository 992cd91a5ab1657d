package stdio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Conn is an in-process client's connection to its server through the layer: what it
// writes are JSON-RPC lines to the server, what it reads are the server's lines after
// the faults. Reading ends (io.EOF) when the server has exited.
type Conn struct {
	s *session
	r *io.PipeReader
	w *io.PipeWriter

	mu      sync.Mutex
	partial []byte
}

// ErrServerGone is a message sent after the server exited.
var ErrServerGone = errors.New("the server has exited")

// Read reads the server's lines (after the faults).
func (c *Conn) Read(p []byte) (int, error) { return c.r.Read(p) }

// Write takes newline-delimited messages, each handled as it is complete.
func (c *Conn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.partial = append(c.partial, p...)
	for {
		i := bytes.IndexByte(c.partial, '\n')
		if i < 0 {
			break
		}
		line := bytes.TrimSuffix(c.partial[:i], []byte{'\r'})
		c.s.fromClient(bytes.Clone(line), nil, false)
		c.partial = c.partial[i+1:]
	}
	if len(c.partial) > c.s.l.cfg.MaxLine {
		c.partial = nil
		return len(p), fmt.Errorf("a line over %d bytes", c.s.l.cfg.MaxLine)
	}
	c.partial = bytes.Clone(c.partial)
	return len(p), nil
}

// Send sends one message (no newline) with the attributes the rules match on
// (Match.Headers) and the journal records: a harness marks an attempt's step this way,
// out of the server's sight.
func (c *Conn) Send(line []byte, attrs map[string]string) error {
	if bytes.IndexByte(line, '\n') >= 0 {
		return errors.New("send: a message must not contain a newline")
	}
	if c.s.isGone() {
		return ErrServerGone
	}
	c.s.fromClient(bytes.Clone(line), attrs, true)
	return nil
}

// Close ends the connection: the server is stopped and reaped.
func (c *Conn) Close() error {
	c.r.CloseWithError(io.EOF) // the layer's writes for the client end now, not block
	c.s.stop()
	return nil
}

// Kill ends the server at once (SIGKILL to its process group), as after-kill does; the
// connection ends with it.
func (c *Conn) Kill() { c.s.kill() }

// Done is closed once the server has exited (by itself, killed, or stopped).
func (c *Conn) Done() <-chan struct{} { return c.s.dead }

// Exit says how the server ended, with its stderr's tail; "" while it runs.
func (c *Conn) Exit() string { return c.s.exitNote() }

// Process is the server process of this connection; nil for a server the layer runs
// in-process (Config.Serve).
func (c *Conn) Process() *Process {
	p, _ := c.s.proc.(*Process)
	return p
}

// Package jsonl is the framing of MCP's stdio transport: JSON-RPC messages, one per line,
// delimited by a newline, with no newline inside a message (MCP specification 2025-11-25,
// "Transports: stdio"). It reads and writes lines, and tells what kind of JSON-RPC
// message a line holds; what to do with the messages is its callers' business (the
// fault layer, the client).
//
// What is guaranteed: memory is bounded by the longest line allowed (a longer one is
// ErrLineTooLong, skipped to its end, and reading goes on); a line is written whole in
// one write, never interleaved with another writer's; a last line cut off without its
// newline (a writer that died mid-line) is returned with io.ErrUnexpectedEOF.
//
// Why hand-written: a bufio.Reader with a bound is all the framing there is; the SDKs'
// own line readers (the go-sdk's ioConn, mcp-go's stdio transport) decode messages into
// their types and hide the raw bytes, which a fault layer must keep and damage.
package jsonl

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/tidwall/gjson"
)

// DefaultMaxLine is the longest line read when a Reader is given no bound.
const DefaultMaxLine = 4 << 20

// ErrLineTooLong is a line over the Reader's bound; it was skipped.
var ErrLineTooLong = errors.New("line over the length bound")

// Reader reads newline-delimited lines.
type Reader struct {
	br  *bufio.Reader
	max int
}

// NewReader reads lines of at most max bytes from r (0: DefaultMaxLine).
func NewReader(r io.Reader, max int) *Reader {
	if max <= 0 {
		max = DefaultMaxLine
	}
	return &Reader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Next returns the next line without its newline (and without a carriage return before
// it). At the end of the input it returns io.EOF; a last line without a newline comes
// with io.ErrUnexpectedEOF. A line over the bound is skipped and reported as
// ErrLineTooLong with its first bytes; the next call reads the line after it.
func (r *Reader) Next() ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.br.ReadSlice('\n')
		if len(line)+len(chunk) > r.max+1 {
			head := append(line, chunk...)[:min(len(line)+len(chunk), 64)]
			if errors.Is(err, bufio.ErrBufferFull) {
				if derr := r.discardLine(); derr != nil && !errors.Is(derr, io.EOF) {
					return nil, derr
				}
			}
			return bytes.Clone(head), fmt.Errorf("%w (%d bytes)", ErrLineTooLong, r.max)
		}
		line = append(line, chunk...)
		switch {
		case err == nil:
			line = bytes.TrimSuffix(line[:len(line)-1], []byte{'\r'})
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(line) > 0:
			return line, io.ErrUnexpectedEOF
		default:
			return nil, err
		}
	}
}

func (r *Reader) discardLine() error {
	for {
		_, err := r.br.ReadSlice('\n')
		if !errors.Is(err, bufio.ErrBufferFull) {
			return err
		}
	}
}

// Writer writes whole lines; it is safe for concurrent use.
type Writer struct {
	mu sync.Mutex
	w  io.Writer
}

// NewWriter writes lines to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// WriteLine writes line and its newline in one write. A line holding a newline is
// refused: it would be two messages on the wire.
func (w *Writer) WriteLine(line []byte) error {
	if bytes.IndexByte(line, '\n') >= 0 {
		return errors.New("write line: a message must not contain a newline")
	}
	buf := make([]byte, 0, len(line)+1)
	buf = append(append(buf, line...), '\n')
	return w.WriteRaw(buf)
}

// WriteRaw writes b as it is, in one write: a fault's damaged line.
func (w *Writer) WriteRaw(b []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err := w.w.Write(b)
	return err
}

// Kind is what a line holds.
type Kind int

// Kinds of line.
const (
	Invalid      Kind = iota // not a JSON-RPC 2.0 message
	Request                  // a method and an id: it wants an answer
	Notification             // a method without an id
	Response                 // a result or an error, for an id
)

func (k Kind) String() string {
	switch k {
	case Request:
		return "request"
	case Notification:
		return "notification"
	case Response:
		return "response"
	}
	return "invalid"
}

// Message is what a line says of itself.
type Message struct {
	Kind   Kind
	ID     []byte // the id in compact JSON (7, "a-1"); nil without one (or null)
	Method string
}

// Parse reads the JSON-RPC envelope of a line (not its params). Batches (a JSON array),
// which MCP's 2025-06-18 revision removed, are Invalid.
func Parse(line []byte) Message {
	if !gjson.ValidBytes(line) {
		return Message{}
	}
	got := gjson.GetManyBytes(line, "jsonrpc", "id", "method", "result", "error")
	if got[0].Str != "2.0" {
		return Message{}
	}
	m := Message{ID: CompactID(got[1])}
	switch {
	case got[2].Type == gjson.String && got[2].Str != "":
		m.Method = got[2].Str
		m.Kind = Notification
		if m.ID != nil {
			m.Kind = Request
		}
	case got[3].Exists() || got[4].Exists():
		m.Kind = Response
	}
	return m
}

// CompactID is a JSON-RPC id (a string or a number) in compact JSON; nil for none, null,
// or anything else.
func CompactID(v gjson.Result) []byte {
	switch v.Type {
	case gjson.String:
		b, _ := json.Marshal(v.Str)
		return b
	case gjson.Number:
		return []byte(v.Raw)
	}
	return nil
}

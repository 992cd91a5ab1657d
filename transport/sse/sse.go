// Package sse reads a Server-Sent Events stream (the text/event-stream format of the
// HTML Living Standard, "Server-sent events", section 9.2.6 "Interpreting an event
// stream"), as an MCP Streamable HTTP server answers a POST with one.
//
// What is guaranteed: Next returns each complete event in order — its data lines joined
// with "\n", its event type and id — and skips comments (lines starting with ":") and
// blank dispatches. A stream that ends inside an event (bytes after the last blank line)
// is reported as ErrCut, never as a complete event: the client did not see that answer
// whole. One event is bounded by MaxEventBytes; a longer one is an error, not a silent
// truncation.
//
// Why it is hand-written: the official MCP go-sdk has an event scanner, but it is
// unexported (mcp.scanEventsLimited); the format is small and its one subtle rule — an
// event is dispatched only at a blank line — is exactly what tells a cut stream from a
// complete one.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// MaxEventBytes bounds one event (its lines together).
const MaxEventBytes = 4 << 20

// ErrCut is returned when the stream ends inside an event.
var ErrCut = errors.New("event stream cut mid-event")

// Event is one dispatched event.
type Event struct {
	Type  string // the "event:" field; "" means "message"
	ID    string // the "id:" field of this event ("" when it set none)
	Data  []byte // the "data:" lines joined with "\n"
	Retry int    // the "retry:" field in milliseconds; 0 when not set
}

// Reader reads events from a stream.
type Reader struct {
	r   *bufio.Reader
	max int
	// lastID and retry are the standard's "last event ID buffer" and "reconnection
	// time": set by every id and retry field, whether or not its event is dispatched (an
	// MCP priming event is an id with empty data, a retry hint may come alone).
	lastID string
	retry  int
}

// LastEventID is the last id field read so far ("" when none): what a client sends as
// Last-Event-ID to resume the stream.
func (s *Reader) LastEventID() string { return s.lastID }

// RetryMillis is the last retry field read so far, in milliseconds (0 when none): how
// long the server asked a client to wait before it reconnects.
func (s *Reader) RetryMillis() int { return s.retry }

// NewReader reads events from r.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 16<<10), max: MaxEventBytes}
}

// Next returns the next complete event; io.EOF at a clean end of the stream, ErrCut when
// it ends inside an event, or the reader's own error (a reset, a timeout) wrapped.
func (s *Reader) Next() (Event, error) {
	var ev Event
	var data bytes.Buffer
	hasData, started, size := false, false, 0
	for {
		line, err := s.readLine(&size)
		if err != nil {
			if errors.Is(err, io.EOF) {
				if started || len(line) > 0 {
					return Event{}, ErrCut
				}
				return Event{}, io.EOF
			}
			return Event{}, err
		}
		if len(line) == 0 {
			if !hasData {
				// A blank line with no data dispatches nothing (the standard: an empty
				// data buffer is not an event); a comment-only block ends here too.
				ev, started, size = Event{}, false, 0
				continue
			}
			ev.Data = bytes.Clone(data.Bytes())
			return ev, nil
		}
		started = true
		if line[0] == ':' {
			continue // a comment, e.g. a keep-alive
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "data":
			if hasData {
				data.WriteByte('\n')
			}
			data.Write(value)
			hasData = true
		case "event":
			ev.Type = string(value)
		case "id":
			if !bytes.Contains(value, []byte{0}) {
				ev.ID = string(value)
				s.lastID = ev.ID
			}
		case "retry":
			if n, err := strconv.Atoi(string(value)); err == nil && n >= 0 {
				ev.Retry = n
				s.retry = n
			}
		}
		// Any other field is ignored, as the standard says.
	}
}

// readLine returns one line without its terminator (CRLF, LF or CR). At the end of the
// stream it returns what it has with io.EOF: a line without its terminator is not a
// complete line.
func (s *Reader) readLine(size *int) ([]byte, error) {
	var line []byte
	for {
		b, err := s.r.ReadByte()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return line, io.EOF
			}
			return line, fmt.Errorf("read event stream: %w", err)
		}
		switch b {
		case '\n':
			return line, nil
		case '\r':
			if next, err := s.r.Peek(1); err == nil && next[0] == '\n' {
				_, _ = s.r.ReadByte()
			}
			return line, nil
		}
		*size++
		if *size > s.max {
			return nil, fmt.Errorf("read event stream: an event over %d bytes", s.max)
		}
		line = append(line, b)
	}
}

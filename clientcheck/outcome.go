package clientcheck

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
)

// What the client says happened to one logical operation.
const (
	OutcomeOK      = "ok"      // the client saw the operation succeed
	OutcomeFailed  = "failed"  // the client concluded it did not happen (a definite refusal)
	OutcomeUnknown = "unknown" // the client could not tell (responses lost, retries exhausted)
)

// Outcome is one line of the outcome file: JSON Lines, one object per logical operation,
// e.g. {"operation":"order-1","outcome":"ok","key":"9b1d…","status":201}. Operation is the
// entity (the refund's order_id); Key and Status are optional and only shown in reports.
// When an operation appears more than once, the last line wins.
type Outcome struct {
	Operation string `json:"operation"`
	Outcome   string `json:"outcome"`
	Key       string `json:"key,omitempty"`
	Status    int    `json:"status,omitempty"`
	Note      string `json:"note,omitempty"`
}

// ParseOutcomes reads an outcome file. Blank lines are skipped; any other line that is
// not a valid Outcome is an error naming the line and what to fix.
func ParseOutcomes(r io.Reader) ([]Outcome, error) {
	var out []Outcome
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var o Outcome
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&o); err != nil {
			return out, fmt.Errorf("outcome file line %d: want one JSON object like "+
				`{"operation":"order-1","outcome":"ok"}: %w`, n, err)
		}
		if _, err := dec.Token(); err != io.EOF {
			return out, fmt.Errorf("outcome file line %d: more after the JSON object: want exactly one object per line", n)
		}
		if o.Operation == "" {
			return out, fmt.Errorf("outcome file line %d: \"operation\" is empty: set it to the order_id", n)
		}
		switch o.Outcome {
		case OutcomeOK, OutcomeFailed, OutcomeUnknown:
		default:
			return out, fmt.Errorf("outcome file line %d: outcome %q: use %q, %q or %q",
				n, o.Outcome, OutcomeOK, OutcomeFailed, OutcomeUnknown)
		}
		out = append(out, o)
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("read outcome file: %w", err)
	}
	return out, nil
}

// ReadOutcomeFile parses the file at path; a missing file is (nil, false, nil): the
// client chose not to report.
func ReadOutcomeFile(path string) (outcomes []Outcome, written bool, err error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("open outcome file: %w", err)
	}
	defer f.Close()
	outcomes, err = ParseOutcomes(f)
	return outcomes, true, err
}

// OutcomeWriter appends outcomes to a file, safe for concurrent use: a Go harness's
// helper for the outcome file.
type OutcomeWriter struct {
	mu   sync.Mutex
	path string
}

// NewOutcomeWriter writes to path (Env.OutcomeFile).
func NewOutcomeWriter(path string) *OutcomeWriter { return &OutcomeWriter{path: path} }

// Write appends one outcome line.
func (w *OutcomeWriter) Write(o Outcome) error {
	b, err := json.Marshal(o)
	if err != nil {
		return fmt.Errorf("encode outcome: %w", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	f, err := os.OpenFile(w.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("open outcome file: %w", err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("write outcome file: %w", err)
	}
	return f.Close()
}

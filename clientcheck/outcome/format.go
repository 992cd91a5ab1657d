package outcome

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
)

// The values of a line's "outcome".
const (
	OutcomeOK      = "ok"      // the client saw the operation succeed
	OutcomeFailed  = "failed"  // the client concluded it did not happen (a definite refusal)
	OutcomeUnknown = "unknown" // the client could not tell (responses lost, retries exhausted)
)

// EnvFile names the environment variable client-check exports the file's path in.
const EnvFile = "IDEMPROOF_OUTCOME_FILE"

// Line is one line of the outcome file: what the client says happened to one logical
// operation.
type Line struct {
	Operation string `json:"operation"`
	Outcome   string `json:"outcome"`
	Key       string `json:"key,omitempty"`
	Status    int    `json:"status,omitempty"`
	Note      string `json:"note,omitempty"`
}

// Parse reads an outcome file. Blank lines are skipped; any other line that is not a
// valid Line is an error naming the line and what to fix.
func Parse(r io.Reader) ([]Line, error) {
	var out []Line
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var o Line
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

// ReadFile parses the file at path; a missing file is (nil, false, nil): the client
// chose not to report.
func ReadFile(path string) (lines []Line, written bool, err error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("open outcome file: %w", err)
	}
	defer f.Close()
	lines, err = Parse(f)
	return lines, true, err
}

// Writer appends lines to a file, safe for concurrent use.
type Writer struct {
	mu   sync.Mutex
	path string
}

// NewWriter writes to path (client-check's Env.OutcomeFile, $IDEMPROOF_OUTCOME_FILE).
func NewWriter(path string) *Writer { return &Writer{path: path} }

// Write appends one line.
func (w *Writer) Write(o Line) error {
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

package clientcheck

import (
	"io"

	clientoutcome "github.com/idemproof/idemproof/clientcheck/outcome"
)

// The outcome file's format and its Go helpers live in clientcheck/outcome (a room of
// its own: a client imports it without the harness); these names keep the harness's
// own spelling of them.

// What the client says happened to one logical operation.
const (
	OutcomeOK      = clientoutcome.OutcomeOK
	OutcomeFailed  = clientoutcome.OutcomeFailed
	OutcomeUnknown = clientoutcome.OutcomeUnknown
)

// Outcome is one line of the outcome file (clientoutcome.Line).
type Outcome = clientoutcome.Line

// OutcomeWriter appends outcomes to a file, safe for concurrent use.
type OutcomeWriter = clientoutcome.Writer

// NewOutcomeWriter writes to path (Env.OutcomeFile).
func NewOutcomeWriter(path string) *OutcomeWriter { return clientoutcome.NewWriter(path) }

// ParseOutcomes reads an outcome file (clientoutcome.Parse).
func ParseOutcomes(r io.Reader) ([]Outcome, error) { return clientoutcome.Parse(r) }

// ReadOutcomeFile parses the file at path; a missing file is (nil, false, nil).
func ReadOutcomeFile(path string) (outcomes []Outcome, written bool, err error) {
	return clientoutcome.ReadFile(path)
}

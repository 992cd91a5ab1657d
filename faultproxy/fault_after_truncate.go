package faultproxy

import "fmt"

// afterTruncate lets the upstream commit, then sends the status line, the headers (with
// the full Content-Length) and only the first Bytes of the body before closing.
type afterTruncate struct{ n int }

func newAfterTruncate(spec FaultSpec) (Fault, error) {
	if err := onlyParams(spec, "bytes"); err != nil {
		return nil, err
	}
	if spec.Bytes < 0 {
		return nil, &FieldError{Field: "fault.bytes", Msg: fmt.Sprintf("must be >= 0, got %d", spec.Bytes)}
	}
	return afterTruncate{spec.Bytes}, nil
}

func (f afterTruncate) Apply(ex *Exchange) {
	if resp, ok := ex.Upstream(); ok {
		ex.Truncate(resp, f.n)
	}
}

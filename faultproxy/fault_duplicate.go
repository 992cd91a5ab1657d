package faultproxy

import "fmt"

// Mode values of duplicate.
const (
	ModeSequential = "sequential"
	ModeConcurrent = "concurrent"
)

// duplicate delivers the request to the upstream twice, as a load balancer that retries
// on another replica does: one copy after the other, or both at the same moment. The
// client gets the second copy's response.
type duplicate struct{ concurrent bool }

func newDuplicate(spec FaultSpec) (Fault, error) {
	if err := onlyParams(spec, "mode"); err != nil {
		return nil, err
	}
	switch spec.Mode {
	case "", ModeSequential:
		return duplicate{}, nil
	case ModeConcurrent:
		return duplicate{concurrent: true}, nil
	}
	return nil, &FieldError{Field: "fault.mode", Msg: fmt.Sprintf("must be %q or %q, got %q", ModeSequential, ModeConcurrent, spec.Mode)}
}

func (f duplicate) Apply(ex *Exchange) { ex.ForwardTwice(f.concurrent) }

package faultproxy

import (
	"fmt"
	"time"
)

// Then values of after-hold.
const (
	ThenDeliver = "deliver"
	ThenDrop    = "drop"
)

// afterHold lets the upstream commit, then holds the response for Duration (meant to
// outlast the client's timeout) and delivers it or closes the connection. A client that
// gives up during the hold is journaled as timed-out.
type afterHold struct {
	d    time.Duration
	drop bool
}

func newAfterHold(spec FaultSpec) (Fault, error) {
	if err := onlyParams(spec, "duration_ms", "then"); err != nil {
		return nil, err
	}
	if err := durationParam(spec); err != nil {
		return nil, err
	}
	switch spec.Then {
	case "", ThenDeliver:
		return afterHold{d: spec.Duration}, nil
	case ThenDrop:
		return afterHold{d: spec.Duration, drop: true}, nil
	}
	return nil, &FieldError{Field: "fault.then", Msg: fmt.Sprintf("must be %q or %q, got %q", ThenDeliver, ThenDrop, spec.Then)}
}

func (f afterHold) Apply(ex *Exchange) {
	resp, ok := ex.Upstream()
	if !ok || !ex.Wait(f.d) {
		return
	}
	if f.drop {
		ex.Close()
		return
	}
	ex.Deliver(resp)
}

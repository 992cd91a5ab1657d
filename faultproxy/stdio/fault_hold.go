package stdio

import (
	"fmt"
	"time"

	"github.com/idemproof/idemproof/faultproxy"
)

// afterHold lets the server answer, holds the answer (meant to outlast the client's
// timeout), then delivers it late or drops it.
type afterHold struct {
	d    time.Duration
	drop bool
}

func newAfterHold(spec faultproxy.FaultSpec) (fault, error) {
	if err := onlyParams(spec, "duration_ms", "then"); err != nil {
		return nil, err
	}
	d, err := durationParam(spec)
	if err != nil {
		return nil, err
	}
	switch spec.Then {
	case "", faultproxy.ThenDeliver:
		return afterHold{d: d}, nil
	case faultproxy.ThenDrop:
		return afterHold{d: d, drop: true}, nil
	}
	return nil, &faultproxy.FieldError{Field: "fault.then", Msg: fmt.Sprintf("must be %q or %q, got %q", faultproxy.ThenDeliver, faultproxy.ThenDrop, spec.Then)}
}

func (afterHold) forwardsAtOnce() bool { return true }

func (f afterHold) apply(x *exchange) {
	answer, ok := x.await()
	if !ok {
		return
	}
	held := x.wait(f.d)
	if f.drop || !held {
		x.note(fmt.Sprintf("the answer was held %s, then dropped", f.d))
		x.drop()
		return
	}
	x.note(fmt.Sprintf("the answer was held %s", f.d))
	x.deliver(answer)
}

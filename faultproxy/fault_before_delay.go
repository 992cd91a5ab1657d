package faultproxy

import "time"

// beforeDelay waits Duration, then forwards normally; if the client gives up during the
// wait the request is never forwarded.
type beforeDelay struct{ d time.Duration }

func newBeforeDelay(spec FaultSpec) (Fault, error) {
	if err := onlyParams(spec, "duration_ms"); err != nil {
		return nil, err
	}
	return beforeDelay{spec.Duration}, durationParam(spec)
}

func (f beforeDelay) Apply(ex *Exchange) {
	if ex.Wait(f.d) {
		ex.Forward()
	}
}

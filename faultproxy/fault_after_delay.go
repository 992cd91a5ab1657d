package faultproxy

import "time"

// afterDelay lets the upstream commit, then delays the complete response by Duration.
type afterDelay struct{ d time.Duration }

func newAfterDelay(spec FaultSpec) (Fault, error) {
	if err := onlyParams(spec, "duration_ms"); err != nil {
		return nil, err
	}
	return afterDelay{spec.Duration}, durationParam(spec)
}

func (f afterDelay) Apply(ex *Exchange) {
	if resp, ok := ex.Upstream(); ok && ex.Wait(f.d) {
		ex.Deliver(resp)
	}
}

package faultproxy

// afterStatus lets the upstream commit, then replaces its response with a status
// (default 503), as a gateway that lost the upstream's answer would.
type afterStatus struct{ reply statusResponse }

func newAfterStatus(spec FaultSpec) (Fault, error) {
	reply, err := newStatusResponse(spec)
	return afterStatus{reply}, err
}

func (f afterStatus) Apply(ex *Exchange) {
	if _, ok := ex.Upstream(); ok {
		f.reply.send(ex)
	}
}

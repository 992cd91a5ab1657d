package faultproxy

// beforeStatus answers with a status (default 503) without forwarding: the request
// never reaches the upstream.
type beforeStatus struct{ reply statusResponse }

func newBeforeStatus(spec FaultSpec) (Fault, error) {
	reply, err := newStatusResponse(spec)
	return beforeStatus{reply}, err
}

func (f beforeStatus) Apply(ex *Exchange) { f.reply.send(ex) }

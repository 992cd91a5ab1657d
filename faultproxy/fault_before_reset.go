package faultproxy

// beforeReset resets the client connection (RST) without forwarding.
type beforeReset struct{}

func newBeforeReset(spec FaultSpec) (Fault, error) {
	return beforeReset{}, onlyParams(spec)
}

func (beforeReset) Apply(ex *Exchange) { ex.Reset() }

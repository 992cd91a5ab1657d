package faultproxy

// afterReset lets the upstream commit, then resets the client connection (RST).
type afterReset struct{}

func newAfterReset(spec FaultSpec) (Fault, error) { return afterReset{}, onlyParams(spec) }

func (afterReset) Apply(ex *Exchange) {
	if _, ok := ex.Upstream(); ok {
		ex.Reset()
	}
}

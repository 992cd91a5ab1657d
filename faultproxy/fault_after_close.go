package faultproxy

// afterClose lets the upstream commit, then closes the client connection without
// sending a byte.
type afterClose struct{}

func newAfterClose(spec FaultSpec) (Fault, error) { return afterClose{}, onlyParams(spec) }

func (afterClose) Apply(ex *Exchange) {
	if _, ok := ex.Upstream(); ok {
		ex.Close()
	}
}

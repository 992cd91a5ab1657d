package stdio

import (
	"github.com/idemproof/idemproof/faultproxy"
)

// beforeStatus answers the request in the server's stead with the fault's JSON-RPC
// response (its id the request's); the server never reads the request.
type beforeStatus struct{ body []byte }

func newBeforeStatus(spec faultproxy.FaultSpec) (fault, error) {
	b, err := answerBody(spec)
	return beforeStatus{b}, err
}

func (beforeStatus) forwardsAtOnce() bool { return false }

func (f beforeStatus) apply(x *exchange) {
	x.note("answered by the layer; the request line never reached the server")
	x.deliver(x.answering(f.body))
}

// afterStatus lets the server answer, then replaces its answer with the fault's JSON-RPC
// response (its id the request's).
type afterStatus struct{ body []byte }

func newAfterStatus(spec faultproxy.FaultSpec) (fault, error) {
	b, err := answerBody(spec)
	return afterStatus{b}, err
}

func (afterStatus) forwardsAtOnce() bool { return true }

func (f afterStatus) apply(x *exchange) {
	if _, ok := x.await(); ok {
		x.note("the server's answer was replaced by the layer's")
		x.deliver(x.answering(f.body))
	}
}

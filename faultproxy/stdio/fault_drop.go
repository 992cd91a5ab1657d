package stdio

import "github.com/idemproof/idemproof/faultproxy"

// beforeDrop never writes the request to the server: it never arrives, and nothing
// answers it.
type beforeDrop struct{}

func (beforeDrop) forwardsAtOnce() bool { return false }

func (beforeDrop) apply(x *exchange) {
	x.note("the request line never reached the server")
	x.rec.ClientResult = faultproxy.ClientDropped
}

// afterDrop lets the server answer, then never delivers the answer: the client is left
// waiting for a result that committed.
type afterDrop struct{}

func (afterDrop) forwardsAtOnce() bool { return true }

func (afterDrop) apply(x *exchange) {
	if _, ok := x.await(); ok {
		x.drop()
	}
}

package stdio

import "github.com/idemproof/idemproof/faultproxy"

// afterKill lets the server answer, then kills it (its whole process group) before the
// answer reaches the client: a server that crashed right after it committed. The client
// sees its server's output end; the connection is over.
type afterKill struct{}

func (afterKill) forwardsAtOnce() bool { return true }

func (afterKill) apply(x *exchange) {
	if _, ok := x.await(); !ok {
		return
	}
	x.s.kill()
	x.note("the server was killed right after it answered; the answer was lost with it")
	x.rec.ClientResult = faultproxy.ClientKilled
}

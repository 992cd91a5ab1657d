package stdio

import (
	"fmt"
	"time"

	"github.com/idemproof/idemproof/faultproxy"
)

// beforeDelay holds the request back for a while, then forwards it and delivers its
// answer.
type beforeDelay struct{ d time.Duration }

func newBeforeDelay(spec faultproxy.FaultSpec) (fault, error) {
	if err := onlyParams(spec, "duration_ms"); err != nil {
		return nil, err
	}
	d, err := durationParam(spec)
	return beforeDelay{d}, err
}

func (beforeDelay) forwardsAtOnce() bool { return false }

func (f beforeDelay) apply(x *exchange) {
	if !x.wait(f.d) {
		x.note(fmt.Sprintf("the server exited during the %s delay", f.d))
		x.rec.ClientResult = faultproxy.ClientClosed
		return
	}
	x.rec.ForwardedAfterMillis = millis(time.Since(x.rec.Time))
	if x.forward(x.line, x.msg.ID) {
		passThrough{}.apply(x)
	}
}

// afterDelay delivers the server's answer late.
type afterDelay struct{ d time.Duration }

func newAfterDelay(spec faultproxy.FaultSpec) (fault, error) {
	if err := onlyParams(spec, "duration_ms"); err != nil {
		return nil, err
	}
	d, err := durationParam(spec)
	return afterDelay{d}, err
}

func (afterDelay) forwardsAtOnce() bool { return true }

func (f afterDelay) apply(x *exchange) {
	answer, ok := x.await()
	if !ok {
		return
	}
	if !x.wait(f.d) {
		x.note("the connection ended during the delay")
		x.drop()
		return
	}
	x.deliver(answer)
}

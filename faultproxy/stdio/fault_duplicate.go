package stdio

import (
	"fmt"

	"github.com/idemproof/idemproof/faultproxy"
)

// duplicate writes the request to the server twice, as a relay that re-sends does: the
// copy under an id of the layer's own (the server must see two requests, not one id
// twice), one after the other's answer or both at once. The client gets the answer to
// its own id; the copy's answer is journaled and kept from it.
type duplicate struct{ concurrent bool }

func newDuplicate(spec faultproxy.FaultSpec) (fault, error) {
	if err := onlyParams(spec, "mode"); err != nil {
		return nil, err
	}
	switch spec.Mode {
	case "", faultproxy.ModeSequential:
		return duplicate{}, nil
	case faultproxy.ModeConcurrent:
		return duplicate{concurrent: true}, nil
	}
	return nil, &faultproxy.FieldError{Field: "fault.mode", Msg: fmt.Sprintf("must be %q or %q, got %q", faultproxy.ModeSequential, faultproxy.ModeConcurrent, spec.Mode)}
}

func (duplicate) forwardsAtOnce() bool { return true }

func (f duplicate) apply(x *exchange) {
	cp, ok := x.copyOf()
	if !ok {
		passThrough{}.apply(x)
		return
	}
	if f.concurrent {
		x.forwardCopy(cp)
	}
	answer, ok := x.await()
	if !ok {
		return
	}
	if !f.concurrent && !x.forwardCopy(cp) {
		x.deliver(answer)
		return
	}
	x.awaitCopy(cp)
	x.deliver(answer)
}

// passThrough forwards (the session did) and delivers the server's answer as it is.
type passThrough struct{}

func (passThrough) forwardsAtOnce() bool { return true }

func (passThrough) apply(x *exchange) {
	if x.inline {
		select {
		case <-x.delivered:
		case <-x.s.dead:
			select {
			case <-x.delivered:
			default:
				x.note(x.s.exitNote() + " before it answered")
				x.rec.ClientResult = faultproxy.ClientClosed
			}
		}
		return
	}
	if answer, ok := x.await(); ok {
		x.deliver(answer)
	}
}

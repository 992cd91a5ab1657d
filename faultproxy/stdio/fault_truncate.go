package stdio

import (
	"fmt"

	"github.com/idemproof/idemproof/faultproxy"
)

// afterTruncate lets the server answer, then delivers only the first bytes of its answer
// line, and the newline: a line the client cannot read as JSON.
type afterTruncate struct{ n int }

func newAfterTruncate(spec faultproxy.FaultSpec) (fault, error) {
	if err := onlyParams(spec, "bytes"); err != nil {
		return nil, err
	}
	if spec.Bytes < 0 {
		return nil, &faultproxy.FieldError{Field: "fault.bytes", Msg: fmt.Sprintf("must be >= 0, got %d", spec.Bytes)}
	}
	return afterTruncate{spec.Bytes}, nil
}

func (afterTruncate) forwardsAtOnce() bool { return true }

func (f afterTruncate) apply(x *exchange) {
	answer, ok := x.await()
	if !ok {
		return
	}
	n := min(f.n, max(len(answer)-1, 0))
	x.deliverCut(append(answer[:n:n], '\n'))
	x.note(fmt.Sprintf("the answer line was cut after %d of its %d bytes", n, len(answer)))
}

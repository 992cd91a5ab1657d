package clientcheck

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strings"
	"time"

	"github.com/idemproof/idemproof/downstream"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/verdict"
)

// The vendor boundary, seen from the client's side: when the target calls a vendor (the
// profile's downstream:, or the embedded reference, which notifies one of every refund),
// a recording sink stands in for it, and client/one-vendor-effect-per-operation checks
// that each operation the target did once, the vendor did once too — across the client's
// retries and restarts.

// IDVendorOnce is the check of the vendor's effects per operation.
const IDVendorOnce = "client/one-vendor-effect-per-operation"

// vendorQuiet is how long an operation's vendor calls must have stopped before the
// settle step stops waiting for it.
const vendorQuiet = 300 * time.Millisecond

// openSink starts the sink the profile declares (nil, nil without downstream:). A sink
// already running (Downstream.Sink) is used as is and not closed.
func openSink(p *profile.Profile) (downstream.Recorder, func(), error) {
	d := p.Downstream
	if d == nil {
		return nil, func() {}, nil
	}
	if d.Sink != nil {
		return d.Sink, func() {}, nil
	}
	if d.Admin != "" {
		return downstream.NewRemote(d.Admin), func() {}, nil
	}
	if _, port, _ := net.SplitHostPort(d.Listen); port == "0" {
		return nil, nil, fmt.Errorf("profile %s: downstream.listen %s picks a free port the target cannot know: give the fixed address the target calls as its vendor, e.g. 127.0.0.1:9090", p.Name, d.Listen)
	}
	s, err := downstream.Start(d.SinkConfig())
	if err != nil {
		return nil, nil, fmt.Errorf("profile %s: downstream: %w", p.Name, err)
	}
	return s, func() { s.Close() }, nil
}

// settleVendor waits (bounded by the profile's downstream.settle) for the vendor calls of
// the operations that took effect, then sums them up per operation.
func settleVendor(ctx context.Context, sink downstream.Recorder, p *profile.Profile, ledger map[string]int) (map[string]downstream.Ledger, map[string][]downstream.Call, error) {
	settle := profile.DefaultSettle
	if p.Downstream != nil && p.Downstream.Settle > 0 {
		settle = p.Downstream.Settle
	}
	deadline := time.Now().Add(settle.Std())
	out, byOp := map[string]downstream.Ledger{}, map[string][]downstream.Call{}
	ops := make([]string, 0, len(ledger))
	for op := range ledger {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	for _, op := range ops {
		until := deadline
		if ledger[op] == 0 {
			until = time.Now() // nothing to wait for: what came, came
		}
		calls, err := sink.SettleCalls(ctx, op, 1, vendorQuiet, until)
		if err != nil {
			return nil, nil, err
		}
		out[op], byOp[op] = downstream.LedgerOf(calls), calls
	}
	return out, byOp, nil
}

func checkVendorOnce(o *analysis) conclusion {
	if o.LedgerErr != "" {
		return unknown("ledger unreadable: %s", o.LedgerErr)
	}
	if o.VendorErr != "" {
		return unknown("the vendor's calls could not be read: %s", o.VendorErr)
	}
	f, judged, skipped := failing{}, 0, 0
	_, attempts := o.byOperation()
	for _, op := range o.allOperations() {
		n, ok := o.Ledger[op]
		if !ok || strings.HasPrefix(op, "body:") {
			continue
		}
		v := o.Vendor[op]
		switch {
		case n > 1:
			skipped++ // the API itself did it more than once: client/one-effect-per-operation says so
		case n == 1 && v.Effects == 0:
			judged++
			f.addOp(verdict.CatLost, fmt.Sprintf("%s took effect once at the target, not at its vendor within downstream.settle after the run (%d call(s); a target that delivers later declares that as downstream.settle)", op, v.Calls), o, op, attempts[op])
		case v.Effects > n:
			judged++
			f.addOp(verdict.CatDuplicated, fmt.Sprintf("%s took effect %d time(s) at the target, %d at its vendor (%d call(s), %d without a key)", op, n, v.Effects, v.Calls, v.Unkeyed), o, op, attempts[op])
		default:
			judged++
		}
	}
	if f.count > 0 {
		return f.fail("%d operation(s) without exactly one vendor effect per effect at the target", f.count)
	}
	if judged == 0 {
		return na("no operation took effect exactly once at the target (%d skipped)", skipped)
	}
	return pass("%d operation(s), the vendor did each as often as the target", judged)
}

package scenarios

import (
	"context"

	"github.com/idemproof/idemproof/profile"
)

// runThroughStore is the preflight's run with the profile's store fault point in front
// of the key store (a point of its own for the preflight when none runs yet). After the
// one operation the point must have seen the API's store traffic — a connection or a
// byte: otherwise the API does not reach its store through store.listen, and every
// store fault would hit a connection it never makes (an outage the API never sees would
// read as an API that survives one).
func (pf *preflight) runThroughStore(ctx context.Context) error {
	p := pf.t.p
	if p.Store == nil {
		return pf.run(ctx)
	}
	if p.Store.Point == nil {
		closePoint, err := StartStorePoints([]*profile.Profile{p})
		if err != nil {
			return err
		}
		defer closePoint()
	}
	pt := p.Store.Point
	before := pt.Stats()
	if err := pf.run(ctx); err != nil {
		return err
	}
	if !pt.Stats().Sub(before).Touched() {
		return pf.fail("store.listen", "the API never used store.listen: after one operation the store fault point at %s saw no connection and no byte on its way to the store at %s; configure the API's store address as %s (and start the API after the point, or let its store client reconnect)",
			pt.Addr(), pt.Upstream(), pt.Addr())
	}
	return nil
}

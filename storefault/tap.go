package storefault

import (
	"sync"
	"sync/atomic"

	"github.com/Shopify/toxiproxy/v2/stream"
	"github.com/Shopify/toxiproxy/v2/toxics"
)

// tapType is the name the tap is registered under in Toxiproxy's toxic registry.
const tapType = "idemproof_store_tap"

var registerTap sync.Once

// tap is the first toxic of both directions of every connection through a point: it
// counts connections and bytes, and for the Down fault refuses new connections and cuts
// existing ones. Its configuration is set once, before the proxy starts, so no link ever
// reads it while it changes.
type tap struct {
	// Upstream is true on the API-to-store direction, where connections are counted.
	Upstream bool `json:"upstream"`
	point    *Point
}

// NewState is called once per connection and direction, when the connection starts.
func (t *tap) NewState() any {
	if t.Upstream {
		t.point.stats.connections.Add(1)
		if t.point.isDown() {
			t.point.stats.refused.Add(1)
		}
	}
	return nil
}

// Pipe passes every chunk on unchanged, counting it, until the stream ends, the toxic
// is interrupted (Toxiproxy rewires the chain; Pipe runs again after), or the point
// goes down (the connection is closed: refused when it is new, cut when it was live).
func (t *tap) Pipe(stub *toxics.ToxicStub) {
	p := t.point
	cut := p.cutSignal()
	if p.isDown() {
		stub.Close()
		return
	}
	for {
		select {
		case <-stub.Interrupt:
			return
		case <-cut:
			if t.Upstream {
				p.stats.cut.Add(1)
			}
			stub.Close()
			return
		case c := <-stub.Input:
			if c == nil {
				stub.Close()
				return
			}
			t.count(c)
			select {
			case stub.Output <- c:
			case <-stub.Interrupt:
				stub.Output <- c // never drop a byte that is not the fault
				return
			}
		}
	}
}

func (t *tap) count(c *stream.StreamChunk) {
	n := int64(len(c.Data))
	if t.Upstream {
		t.point.stats.toStore.Add(n)
	} else {
		t.point.stats.fromStore.Add(n)
	}
}

// counters are a point's Stats, updated by its taps.
type counters struct {
	connections, refused, cut, toStore, fromStore atomic.Int64
}

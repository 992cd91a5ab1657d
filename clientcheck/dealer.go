package clientcheck

import (
	"math/rand/v2"
	"sync"
)

// Assignment is the fault kind one logical operation was dealt.
type Assignment struct {
	Operation string `json:"operation"`
	// Ordinal is the operation's place in the order operations first arrived (1-based).
	Ordinal int `json:"ordinal"`
	// Kind is the fault kind its first attempts get; "" when none (no kinds, or the
	// probability draw of a later reset/close said no: then Dealt names it).
	Kind  string `json:"kind,omitempty"`
	Dealt string `json:"dealt,omitempty"`
}

// dealer deals fault kinds over operations in the order they first arrive: every
// cycle is a seeded permutation of the kinds, so each kind hits one operation of every
// cycle (at least one operation once there are as many operations as kinds), a Once
// kind only in the first cycle. The same seed and the same arrival order deal the same.
type dealer struct {
	kinds []FaultKind

	mu    sync.Mutex
	rng   *rand.Rand
	cycle []int // kind indexes still to deal in this cycle
	seen  map[string]bool
	byOp  map[string]Assignment
	order []string
}

func newDealer(kinds []FaultKind, seed int64) *dealer {
	return &dealer{
		kinds: kinds,
		rng:   rand.New(rand.NewPCG(uint64(seed), 0x636c69656e74)), // "client"
		seen:  map[string]bool{},
		byOp:  map[string]Assignment{},
	}
}

// deal returns the operation's assignment, dealing one at its first arrival.
func (d *dealer) deal(op string) Assignment {
	d.mu.Lock()
	defer d.mu.Unlock()
	if a, ok := d.byOp[op]; ok {
		return a
	}
	a := Assignment{Operation: op, Ordinal: len(d.order) + 1}
	if i, ok := d.next(); ok {
		k := d.kinds[i]
		a.Dealt = k.Name
		if !d.seen[k.Name] || k.Probability >= 1 || d.rng.Float64() < k.Probability {
			a.Kind = k.Name
		}
		d.seen[k.Name] = true
	}
	d.byOp[op] = a
	d.order = append(d.order, op)
	return a
}

// next pops the next kind of the cycle, starting a new cycle when it is empty.
func (d *dealer) next() (int, bool) {
	if len(d.cycle) == 0 {
		var eligible []int
		for i, k := range d.kinds {
			if !k.Once || !d.seen[k.Name] {
				eligible = append(eligible, i)
			}
		}
		for _, j := range d.rng.Perm(len(eligible)) {
			d.cycle = append(d.cycle, eligible[j])
		}
	}
	if len(d.cycle) == 0 {
		return 0, false
	}
	i := d.cycle[0]
	d.cycle = d.cycle[1:]
	return i, true
}

// assignments lists every operation dealt, in arrival order.
func (d *dealer) assignments() []Assignment {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]Assignment, 0, len(d.order))
	for _, op := range d.order {
		out = append(out, d.byOp[op])
	}
	return out
}

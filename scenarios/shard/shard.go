// Package shard splits the scenario catalogue into n parts for parallel CI jobs, the same
// way on every machine: part i of n is decided by scenario ID alone, so n jobs running
// `idemproof check --shard i/n` with the same selection run every scenario exactly once.
//
// The slow scenarios (label speed:slow: they wait out a retention window or a lock
// timeout) are dealt out first, one per part in turn, then the others continue the round,
// so every part gets its share of the waiting and the counts differ by at most one.
// Adding a scenario may move others to another part; shards of one run must come from
// one idemproof version (the merged report checks that they agree on the tool).
package shard

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/idemproof/idemproof/scenarios"
)

// SlowLabel marks the scenarios spread first.
const SlowLabel = "speed:slow"

// Part is shard Index of Count, 1-based.
type Part struct{ Index, Count int }

// Parse reads "i/n" with 1 ≤ i ≤ n.
func Parse(s string) (Part, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil {
		return Part{}, fmt.Errorf("%q: want I/N, e.g. 2/3", s)
	}
	if n < 1 || i < 1 || i > n {
		return Part{}, fmt.Errorf("%q: want 1 ≤ I ≤ N", s)
	}
	return Part{Index: i, Count: n}, nil
}

func (p Part) String() string { return fmt.Sprintf("%d/%d", p.Index, p.Count) }

// Of returns the scenarios of list that belong to part p, in list's order.
func (p Part) Of(list []scenarios.Scenario) []scenarios.Scenario {
	var slow, rest []string
	for _, s := range list {
		if slices.Contains(s.Labels, SlowLabel) {
			slow = append(slow, s.ID)
		} else {
			rest = append(rest, s.ID)
		}
	}
	slices.Sort(slow)
	slices.Sort(rest)
	mine := map[string]bool{}
	for k, id := range append(slow, rest...) {
		if k%p.Count == p.Index-1 {
			mine[id] = true
		}
	}
	var out []scenarios.Scenario
	for _, s := range list {
		if mine[s.ID] {
			out = append(out, s)
		}
	}
	return out
}

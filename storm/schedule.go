package storm

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/idemproof/idemproof/faultproxy"
)

// Schedule is what happens to one logical operation: the faults its first attempt
// meets. The client's own retries come on top (the correct policy of package retryhttp).
// At most one of Fault, Duplicate and Outage is set.
type Schedule struct {
	// Fault is an after-upstream fault on the first attempt (the target commits, the
	// answer is lost): "after-503", "after-502", "after-reset", "after-close",
	// "after-truncate"; "" for none.
	Fault string
	// Duplicate delivers the first attempt to the target twice (a load balancer's retry).
	Duplicate bool
	// Copies is how many first attempts of the key are sent at once (same-key
	// concurrency, as clients that retry on a timer do); 1 sends one.
	Copies int
	// Hold puts the profile's slow_operation on every copy, so the copies meet in
	// flight: each looks its key up while another's work is still held (only with
	// Copies > 1 and slow_operation declared).
	Hold bool
	// Outage is a store fault (profile store:) the first retry meets: "down", "reset" or
	// "hang". The first attempt commits and its answer is lost (a 503 from the proxy), so
	// the client retries, and that retry meets the store out; the store is healed before
	// the next attempt. A target that runs the retry unkeyed (fail-open) executes twice.
	Outage string
}

// Requests is how many requests the schedule itself sends before the client's retries:
// the copies, and the second delivery of a duplicate.
func (s Schedule) Requests() int {
	n := max(s.Copies, 1)
	if s.Duplicate {
		n++
	}
	return n
}

// String is the schedule's --schedule spelling: "plain", or its parts joined by "+":
// "after-503", "duplicate", "copies=2+hold", "outage=down".
func (s Schedule) String() string {
	var parts []string
	if s.Fault != "" {
		parts = append(parts, s.Fault)
	}
	if s.Duplicate {
		parts = append(parts, "duplicate")
	}
	if s.Copies > 1 {
		parts = append(parts, "copies="+strconv.Itoa(s.Copies))
	}
	if s.Hold {
		parts = append(parts, "hold")
	}
	if s.Outage != "" {
		parts = append(parts, "outage="+s.Outage)
	}
	if len(parts) == 0 {
		return "plain"
	}
	return strings.Join(parts, "+")
}

// afterFaults are the after-upstream faults a schedule may name, each the committed
// request's answer lost in another way.
var afterFaults = map[string]faultproxy.FaultSpec{
	"after-503":      {Type: faultproxy.FaultAfterStatus, Status: 503},
	"after-502":      {Type: faultproxy.FaultAfterStatus, Status: 502},
	"after-reset":    {Type: faultproxy.FaultAfterReset},
	"after-close":    {Type: faultproxy.FaultAfterClose},
	"after-truncate": {Type: faultproxy.FaultAfterTruncate, Bytes: 5},
}

var afterFaultNames = []string{"after-503", "after-502", "after-reset", "after-close", "after-truncate"}

var outageNames = []string{"down", "reset", "hang"}

// ParseSchedule reads a --schedule spelling (String's).
func ParseSchedule(spec string) (Schedule, error) {
	s := Schedule{Copies: 1}
	if spec == "plain" {
		return s, nil
	}
	for _, part := range strings.Split(spec, "+") {
		name, value, _ := strings.Cut(part, "=")
		_, isFault := afterFaults[name]
		switch {
		case isFault && value == "":
			s.Fault = name
		case name == "duplicate" && value == "":
			s.Duplicate = true
		case name == "hold" && value == "":
			s.Hold = true
		case name == "copies":
			n, err := strconv.Atoi(value)
			if err != nil || n < 1 || n > maxCopies {
				return s, fmt.Errorf("schedule %q: copies=%s: want 1 to %d", spec, value, maxCopies)
			}
			s.Copies = n
		case name == "outage" && contains(outageNames, value):
			s.Outage = value
		default:
			return s, fmt.Errorf("schedule %q: unknown part %q (want plain, or parts joined by +: %s, duplicate, copies=N, hold, outage=%s)",
				spec, part, strings.Join(afterFaultNames, ", "), strings.Join(outageNames, "|"))
		}
	}
	if n := btoi(s.Fault != "") + btoi(s.Duplicate) + btoi(s.Outage != ""); n > 1 {
		return s, fmt.Errorf("schedule %q: at most one of an after-upstream fault, duplicate and outage", spec)
	}
	if s.Hold && s.Copies < 2 {
		return s, fmt.Errorf("schedule %q: hold needs copies=2 or more (it holds every copy so they meet in flight)", spec)
	}
	return s, nil
}

const maxCopies = 8

// Mix is the storm's share of each kind of schedule.
type Mix struct {
	// FaultRate is the share of operations whose first attempt gets an after-upstream
	// fault (default 0.30).
	FaultRate float64
	// DuplicateRate is the share delivered twice (default 0.05).
	DuplicateRate float64
	// ConcurrentRate is the share sent as 2 to 4 concurrent first attempts of one key
	// (default 0.15): with slow_operation declared, every copy carries it, so the copies
	// meet in flight. At the default size (2,000 operations) that is about 300
	// contended keys: enough that a key recorded after the work (check-then-set) shows
	// a duplicate in every run.
	ConcurrentRate float64
	// OutageRate is the share whose first attempt meets a store outage, with store:
	// (default 0.01; an outage hits every request in flight meanwhile, and outages come
	// one at a time).
	OutageRate float64
}

func (m Mix) withDefaults() Mix {
	if m.FaultRate == 0 {
		m.FaultRate = 0.30
	}
	if m.DuplicateRate == 0 {
		m.DuplicateRate = 0.05
	}
	if m.ConcurrentRate == 0 {
		m.ConcurrentRate = 0.15
	}
	if m.OutageRate == 0 {
		m.OutageRate = 0.01
	}
	return m
}

// deal is operation i's schedule: a function of the seed and i alone, so every shard of a
// storm deals the same schedule to the same operation.
func deal(seed int64, i int, m Mix, canHold, hasStore bool) Schedule {
	r := rand.New(rand.NewPCG(uint64(seed), uint64(i)))
	s := Schedule{Copies: 1}
	x := r.Float64()
	switch {
	case x < m.FaultRate:
		s.Fault = afterFaultNames[r.IntN(len(afterFaultNames))]
	case x < m.FaultRate+m.DuplicateRate:
		s.Duplicate = true
	case x < m.FaultRate+m.DuplicateRate+m.ConcurrentRate:
		s.Copies = 2 + r.IntN(3)
		s.Hold = canHold
	case hasStore && x < m.FaultRate+m.DuplicateRate+m.ConcurrentRate+m.OutageRate:
		s.Outage = outageNames[r.IntN(len(outageNames))]
	}
	return s
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

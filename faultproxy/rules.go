package faultproxy

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
)

// activeRule is a rule with its built fault and its firing count.
type activeRule struct {
	rule  Rule
	fault Fault
	match matcher
	fired int // guarded by ruleSet.drawMu
}

// MaxRules bounds the rules one proxy holds; adding beyond it is refused with
// ErrTooManyRules (matching checks every rule per request, so the bound is also one on
// the time a request spends matching).
const MaxRules = 10000

// ruleSet is the one place where rule selection, Count and Probability are applied.
//
// Readers see an immutable snapshot of the list, so requests that match no rule never
// take a lock; only a matching request takes drawMu, which guards the firing counts and
// the one seeded random source so a seed reproduces the sequence. Adding is O(1)
// amortised: the snapshots share an append-only backing array (a snapshot only reads the
// prefix it was made with), and a name index answers "name in use" without a scan.
// Removing copies the list into a fresh backing array.
type ruleSet struct {
	writeMu sync.Mutex
	list    atomic.Pointer[ruleList]
	names   map[string]bool // guarded by writeMu

	drawMu sync.Mutex
	seed   int64
	rng    *rand.Rand
}

// ruleList is one immutable snapshot of the rules. The matchers sit by value in one
// contiguous slice, so checking a request against many rules walks memory in order
// instead of chasing a pointer per rule.
type ruleList struct {
	rules    []*activeRule
	matchers []matcher
	// matchesHeaders: some rule matches on request headers (the fast path builds a
	// header map only then).
	matchesHeaders bool
}

func newRuleList(rules []*activeRule) *ruleList {
	l := &ruleList{rules: rules, matchers: make([]matcher, len(rules))}
	for i, ar := range rules {
		l.matchers[i] = ar.match
		l.matchesHeaders = l.matchesHeaders || len(ar.match.headers) > 0
	}
	return l
}

func newRuleSet(seed int64) *ruleSet {
	s := &ruleSet{seed: seed, names: map[string]bool{}}
	s.rng = newRand(seed)
	s.list.Store(newRuleList(nil))
	return s
}

func newRand(seed int64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), uint64(seed)^0x9e3779b97f4a7c15))
}

// choose returns the first rule whose match holds, whose count is not used up and whose
// probability draw succeeds; nil when none applies. A draw happens only for a rule that
// matched and has count left, so non-matching traffic does not shift the sequence.
func (s *ruleSet) choose(a *attemptInfo) *activeRule {
	l := s.list.Load()
	for i := range l.matchers {
		if l.matchers[i].matches(a) && s.fire(l.rules[i]) {
			return l.rules[i]
		}
	}
	return nil
}

func (s *ruleSet) fire(ar *activeRule) bool {
	s.drawMu.Lock()
	defer s.drawMu.Unlock()
	if ar.rule.Count > 0 && ar.fired >= ar.rule.Count {
		return false
	}
	if p := ar.rule.Probability; p > 0 && p < 1 && s.rng.Float64() >= p {
		return false
	}
	ar.fired++
	return true
}

// add appends the rules in order, all or none: a name already in use (or used twice in
// the batch) or going past MaxRules adds nothing. The error's Index is the position in
// the batch (-1 for a batch of one).
func (s *ruleSet) add(batch ...*activeRule) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	old := s.list.Load()
	if len(old.rules)+len(batch) > MaxRules {
		return &RuleError{Index: -1, Err: fmt.Errorf("%w: %d in place, %d more asked for", ErrTooManyRules, len(old.rules), len(batch))}
	}
	inBatch := make(map[string]int, len(batch))
	for i, ar := range batch {
		idx := i
		if len(batch) == 1 {
			idx = -1
		}
		if s.names[ar.rule.Name] {
			return &RuleError{Index: idx, Name: ar.rule.Name, Field: "name", Err: ErrRuleExists}
		}
		if j, dup := inBatch[ar.rule.Name]; dup {
			return &RuleError{Index: idx, Name: ar.rule.Name, Field: "name", Err: fmt.Errorf("%w (rule %d has it too)", ErrRuleExists, j)}
		}
		inBatch[ar.rule.Name] = i
	}
	// Appending past a snapshot's length never changes what that snapshot reads; append
	// copies only when the backing array is full (doubling: O(1) amortised).
	next := &ruleList{rules: old.rules, matchers: old.matchers, matchesHeaders: old.matchesHeaders}
	for _, ar := range batch {
		next.rules = append(next.rules, ar)
		next.matchers = append(next.matchers, ar.match)
		next.matchesHeaders = next.matchesHeaders || len(ar.match.headers) > 0
		s.names[ar.rule.Name] = true
	}
	s.list.Store(next)
	return nil
}

func (s *ruleSet) remove(name string) bool {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if !s.names[name] {
		return false
	}
	old := s.list.Load().rules
	next := make([]*activeRule, 0, len(old))
	for _, ar := range old {
		if ar.rule.Name != name {
			next = append(next, ar)
		}
	}
	delete(s.names, name)
	s.list.Store(newRuleList(next)) // a fresh backing array: older snapshots keep theirs
	return true
}

// reset removes every rule and reseeds the random source, so a run that starts with
// Reset is reproducible from the seed.
func (s *ruleSet) reset() {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.list.Store(newRuleList(nil))
	s.names = map[string]bool{}
	s.drawMu.Lock()
	s.rng = newRand(s.seed)
	s.drawMu.Unlock()
}

// RuleStatus is a rule as it stands: its definition and how often it fired.
type RuleStatus struct {
	Rule
	Fired int `json:"fired" yaml:"fired"`
}

func (s *ruleSet) snapshot() []RuleStatus {
	list := s.list.Load().rules
	out := make([]RuleStatus, len(list))
	s.drawMu.Lock()
	defer s.drawMu.Unlock()
	for i, ar := range list {
		out[i] = RuleStatus{Rule: ar.rule, Fired: ar.fired}
	}
	return out
}

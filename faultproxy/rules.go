package faultproxy

import (
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

// ruleSet is the one place where rule selection, Count and Probability are applied.
//
// Readers see an immutable snapshot of the list (copy-on-write), so requests that match
// no rule never take a lock; only a matching request takes drawMu, which guards the
// firing counts and the one seeded random source so a seed reproduces the sequence.
type ruleSet struct {
	writeMu sync.Mutex
	list    atomic.Pointer[ruleList]

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
}

func newRuleList(rules []*activeRule) *ruleList {
	l := &ruleList{rules: rules, matchers: make([]matcher, len(rules))}
	for i, ar := range rules {
		l.matchers[i] = ar.match
	}
	return l
}

func newRuleSet(seed int64) *ruleSet {
	s := &ruleSet{seed: seed}
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

func (s *ruleSet) add(ar *activeRule) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	old := s.list.Load().rules
	for _, have := range old {
		if have.rule.Name == ar.rule.Name {
			return &RuleError{Index: -1, Name: ar.rule.Name, Field: "name", Err: ErrRuleExists}
		}
	}
	next := make([]*activeRule, len(old), len(old)+1)
	copy(next, old)
	next = append(next, ar)
	s.list.Store(newRuleList(next))
	return nil
}

func (s *ruleSet) remove(name string) bool {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	old := s.list.Load().rules
	next := make([]*activeRule, 0, len(old))
	for _, ar := range old {
		if ar.rule.Name != name {
			next = append(next, ar)
		}
	}
	if len(next) == len(old) {
		return false
	}
	s.list.Store(newRuleList(next))
	return true
}

// reset removes every rule and reseeds the random source, so a run that starts with
// Reset is reproducible from the seed.
func (s *ruleSet) reset() {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.list.Store(newRuleList(nil))
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

package outcome

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/tidwall/gjson"
)

// A RetryHint is where a refusal inside the body says when to come back: a JSON-RPC
// error's data.retry_after_ms, a GraphQL error's extensions.retryAfter. HTTP says it
// with the Retry-After header; an API that refuses inside a 200 has no header to say it
// with, and its clients read the body instead. A rule of an in_flight or throttled class
// may carry one.
type RetryHint struct {
	Path string        // gjson path to a number (or a numeric string) of Unit
	Unit time.Duration // time.Millisecond or time.Second
}

// RetryHintSpec is a retry hint as a profile writes it: path and unit ("ms" or "s").
type RetryHintSpec struct {
	Path string
	Unit string
}

// compileRetryHint checks a hint spec.
func compileRetryHint(s RetryHintSpec) (*RetryHint, []error) {
	var errs []error
	h := &RetryHint{Path: s.Path}
	if s.Path == "" {
		errs = append(errs, &SpecError{Field: "retry_after.path", Msg: "required: a gjson path to the wait in the body, e.g. error.data.retry_after_ms"})
	}
	switch s.Unit {
	case "ms":
		h.Unit = time.Millisecond
	case "s":
		h.Unit = time.Second
	default:
		errs = append(errs, &SpecError{Field: "retry_after.unit", Msg: fmt.Sprintf("must be ms or s (the unit of the number at the path), got %q", s.Unit)})
	}
	return h, errs
}

// Read returns the wait the body says: ok false when the path holds no number of at
// least 0 (missing, not a number, negative), which a checker reports as a hint the
// answer lacks.
func (h RetryHint) Read(body []byte) (time.Duration, bool) {
	v := gjson.GetBytes(body, h.Path)
	var n float64
	switch v.Type {
	case gjson.Number:
		n = v.Num
	case gjson.String:
		f, err := strconv.ParseFloat(v.Str, 64)
		if err != nil {
			return 0, false
		}
		n = f
	default:
		return 0, false
	}
	if n < 0 || math.IsNaN(n) || n*float64(h.Unit) > float64(math.MaxInt64) {
		return 0, false
	}
	return time.Duration(n * float64(h.Unit)), true
}

// String describes the hint: "error.data.retry_after_ms (ms)".
func (h RetryHint) String() string {
	unit := "s"
	if h.Unit == time.Millisecond {
		unit = "ms"
	}
	return h.Path + " (" + unit + ")"
}

// Hinted is implemented by classifiers whose rules may carry a retry hint (*Rules).
type Hinted interface {
	// RetryHint returns the hint of the rule that classifies a, or nil.
	RetryHint(a Answer) *RetryHint
}

// RetryHint returns the hint of the rule that gives a its class (the first class in
// precedence with a matching rule, as Classify finds it), or nil when that rule has none
// or no rule classifies a.
func (r *Rules) RetryHint(a Answer) *RetryHint {
	for _, c := range r.classes {
		for _, rule := range c.Rules {
			if rule.Matches(a) && rule.mayClass(a) {
				return rule.RetryAfter
			}
		}
	}
	return nil
}

// RetryAfterIn is the wait a refusal's body says under cl's rules: hint nil when the rule
// that classes a declares none (or cl has no rules); else the hint, and the wait with ok
// true when the body carries it.
func RetryAfterIn(cl Classifier, a Answer) (hint *RetryHint, wait time.Duration, ok bool) {
	h, isHinted := cl.(Hinted)
	if !isHinted {
		return nil, 0, false
	}
	if hint = h.RetryHint(a); hint == nil {
		return nil, 0, false
	}
	wait, ok = hint.Read(a.Body)
	return hint, wait, ok
}

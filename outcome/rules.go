package outcome

import (
	"fmt"
	"math"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/tidwall/gjson"
)

// A Rule recognises one shape of answer. Every predicate it sets must hold: the status is
// one of Status, each JSON predicate holds on the body, Text matches the body, and each
// header predicate holds on the headers. A rule with no predicate at all is refused by
// Compile (it would match everything).
type Rule struct {
	Status []int
	JSON   []JSONPredicate
	Text   *regexp.Regexp
	Header []HeaderPredicate
	// RetryAfter, when set, is where an answer this rule recognises says when to retry
	// (retryhint.go). It takes no part in matching.
	RetryAfter *RetryHint
}

// JSONPredicate tests the value at a gjson path of the body (github.com/tidwall/gjson
// syntax: "error.code", "result.content.0.text", "data.#"). Exactly one test is set:
// Equals (a JSON scalar: a number, a string, a bool, or nil for null), Exists, or
// Matches (a regexp on the value's text: a string's contents, any other value as
// written).
type JSONPredicate struct {
	Path    string
	Equals  any
	IsEqual bool // Equals is set (Equals: nil means "equals null")
	Exists  *bool
	Matches *regexp.Regexp
}

// Holds reports whether the predicate holds on a JSON document. A body that is not JSON
// has no value at any path.
func (p JSONPredicate) Holds(body []byte) bool {
	v := gjson.GetBytes(body, p.Path)
	switch {
	case p.Exists != nil:
		return v.Exists() == *p.Exists
	case p.Matches != nil:
		if !v.Exists() {
			return false
		}
		if v.Type == gjson.String {
			return p.Matches.MatchString(v.Str)
		}
		return p.Matches.MatchString(v.Raw)
	case p.IsEqual:
		return v.Exists() && scalarEquals(v, p.Equals)
	}
	return false
}

func scalarEquals(v gjson.Result, want any) bool {
	switch w := want.(type) {
	case nil:
		return v.Type == gjson.Null
	case bool:
		return (v.Type == gjson.True && w) || (v.Type == gjson.False && !w)
	case string:
		return v.Type == gjson.String && v.Str == w
	case int:
		return v.Type == gjson.Number && v.Num == float64(w)
	case int64:
		return v.Type == gjson.Number && v.Num == float64(w)
	case float64:
		return v.Type == gjson.Number && v.Num == w
	}
	return false
}

// String describes the predicate as a profile would write it.
func (p JSONPredicate) String() string {
	switch {
	case p.Exists != nil && *p.Exists:
		return p.Path + " exists"
	case p.Exists != nil:
		return p.Path + " absent"
	case p.Matches != nil:
		return p.Path + " ~ /" + p.Matches.String() + "/"
	}
	return p.Path + " == " + scalarText(p.Equals)
}

func scalarText(v any) string {
	switch w := v.(type) {
	case nil:
		return "null"
	case string:
		return strconv.Quote(w)
	}
	return fmt.Sprint(v)
}

// Matches reports whether every predicate of the rule holds on the answer.
func (r Rule) Matches(a Answer) bool {
	if len(r.Status) > 0 {
		found := false
		for _, s := range r.Status {
			if s == a.Status {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	for _, p := range r.JSON {
		if !p.Holds(a.Body) {
			return false
		}
	}
	if r.Text != nil && !r.Text.Match(a.Body) {
		return false
	}
	for _, p := range r.Header {
		if !p.Holds(a.Header) {
			return false
		}
	}
	return true
}

// mayClass reports whether the rule may give answer a a class: an answer not seen (no
// status) never, and a 5xx or a 429 only when the rule names its status. A rule written
// for an API's refusals in a 200 (a JSON-RPC or GraphQL error code) would otherwise turn
// the same error body sent with a 500 into the refusal it names, and a server failure
// into a pass; a rule that names the status (S3's 503 SlowDown as throttled) is meant.
func (r Rule) mayClass(a Answer) bool {
	switch {
	case a.Status == 0:
		return false
	case a.Status >= 500 || a.Status == http.StatusTooManyRequests:
		return slices.Contains(r.Status, a.Status)
	}
	return true
}

// String describes the rule: "status 200 and error.code == -32010 and text /reused/".
func (r Rule) String() string {
	var parts []string
	if len(r.Status) > 0 {
		s := make([]string, len(r.Status))
		for i, n := range r.Status {
			s[i] = strconv.Itoa(n)
		}
		parts = append(parts, "status "+strings.Join(s, "|"))
	}
	for _, p := range r.JSON {
		parts = append(parts, p.String())
	}
	if r.Text != nil {
		parts = append(parts, "text /"+r.Text.String()+"/")
	}
	for _, p := range r.Header {
		parts = append(parts, p.String())
	}
	out := strings.Join(parts, " and ")
	if r.RetryAfter != nil {
		out += ", retry after " + r.RetryAfter.String()
	}
	return out
}

// RuleSpec is a rule as a profile writes it, before it is checked; Compile turns it into
// a Rule or says which part is wrong.
type RuleSpec struct {
	Status     []int
	JSON       []JSONSpec
	Text       string
	Header     []HeaderSpec
	RetryAfter *RetryHintSpec
}

// JSONSpec is one JSON predicate as written: Path and exactly one of Equals (with
// HasEquals), Exists or Matches.
type JSONSpec struct {
	Path      string
	Equals    any
	HasEquals bool
	Exists    *bool
	Matches   *string
}

// SpecError names the part of a rule spec that is wrong, relative to the rule:
// "json.matches", "status[1]", "text", "header.name".
type SpecError struct {
	Field string
	Msg   string
}

func (e *SpecError) Error() string { return e.Field + ": " + e.Msg }

// Compile checks a spec and builds its rule. Every problem is returned (each a
// *SpecError), not only the first.
func Compile(s RuleSpec) (Rule, []error) {
	var r Rule
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &SpecError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	if len(s.Status) == 0 && len(s.JSON) == 0 && s.Text == "" && len(s.Header) == 0 {
		bad("", "a rule needs at least one of status, json, text, header (an empty rule would match every answer)")
	}
	for i, st := range s.Status {
		if st < 100 || st > 599 {
			bad(fmt.Sprintf("status[%d]", i), "must be an HTTP status (100-599), got %d", st)
		}
	}
	r.Status = append(r.Status, s.Status...)
	for i, j := range s.JSON {
		p, jerrs := compileJSON(itemField("json", i, len(s.JSON)), j)
		errs = append(errs, jerrs...)
		r.JSON = append(r.JSON, p)
	}
	if s.Text != "" {
		re, err := regexp.Compile(s.Text)
		if err != nil {
			bad("text", "not a regular expression (Go RE2 syntax): %v", err)
		} else {
			r.Text = re
		}
	}
	for i, h := range s.Header {
		p, herrs := compileHeader(itemField("header", i, len(s.Header)), h)
		errs = append(errs, herrs...)
		r.Header = append(r.Header, p)
	}
	if s.RetryAfter != nil {
		h, herrs := compileRetryHint(*s.RetryAfter)
		errs = append(errs, herrs...)
		r.RetryAfter = h
	}
	return r, errs
}

// itemField names item i of a part written n times: "json", or "json[1]" in a list.
func itemField(part string, i, n int) string {
	if n > 1 {
		return fmt.Sprintf("%s[%d]", part, i)
	}
	return part
}

func compileJSON(field string, j JSONSpec) (JSONPredicate, []error) {
	var errs []error
	bad := func(sub, format string, args ...any) {
		errs = append(errs, &SpecError{Field: field + sub, Msg: fmt.Sprintf(format, args...)})
	}
	p := JSONPredicate{Path: j.Path, Exists: j.Exists}
	if j.Path == "" {
		bad(".path", "required: a gjson path into the body, e.g. error.code or result.isError")
	}
	n := 0
	for _, set := range []bool{j.HasEquals, j.Exists != nil, j.Matches != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		bad("", "set exactly one of equals, exists, matches (got %d)", n)
	}
	if j.HasEquals {
		v, err := normaliseScalar(j.Equals)
		if err != nil {
			bad(".equals", "%v", err)
		}
		p.Equals, p.IsEqual = v, true
	}
	if j.Matches != nil {
		re, err := regexp.Compile(*j.Matches)
		if err != nil {
			bad(".matches", "not a regular expression (Go RE2 syntax): %v", err)
		} else {
			p.Matches = re
		}
	}
	return p, errs
}

// normaliseScalar accepts what a YAML or JSON decoder gives for a scalar.
func normaliseScalar(v any) (any, error) {
	switch w := v.(type) {
	case nil, bool, string, float64:
		return w, nil
	case int:
		return w, nil
	case int64:
		return w, nil
	case uint64:
		if w > math.MaxInt64 {
			return float64(w), nil
		}
		return int64(w), nil
	case float32:
		return float64(w), nil
	}
	return nil, fmt.Errorf("must be a JSON scalar (a number, a string, true, false or null), got %T", v)
}

// ClassRules are the rules of one class: the class applies when any of them matches.
type ClassRules struct {
	Class Class
	Rules []Rule
}

// Rules is a rule-based Classifier. The first class (in the order given: the profile's
// precedence) with a matching rule wins. An answer no rule matches gets the Fallback's
// class, unless that class is itself covered by rules: then the rules that describe it
// did not recognise this answer, and it is a ClientError (an answer the profile does not
// name) — so a 200 carrying an unknown JSON-RPC error is never a Success when success has
// rules of its own. ServerError, Throttled and Info from the fallback stay as they are: a
// 5xx, a 429 and a missing answer mean the same whatever the body says.
//
// Rules counts how often each rule matched (Matches), so a preflight can report a rule
// that never matched a real answer.
type Rules struct {
	classes  []ClassRules
	fallback Classifier
	hits     [][]atomic.Int64
	covered  map[Class]bool
}

// NewRules builds the classifier; fallback nil means Statuses{}.
func NewRules(classes []ClassRules, fallback Classifier) *Rules {
	if fallback == nil {
		fallback = Statuses{}
	}
	r := &Rules{classes: classes, fallback: fallback, covered: map[Class]bool{}}
	r.hits = make([][]atomic.Int64, len(classes))
	for i, c := range classes {
		r.hits[i] = make([]atomic.Int64, len(c.Rules))
		if len(c.Rules) > 0 {
			r.covered[c.Class] = true
		}
	}
	return r
}

// Classify implements Classifier.
func (r *Rules) Classify(a Answer) Class {
	for i, c := range r.classes {
		for j, rule := range c.Rules {
			if rule.Matches(a) && rule.mayClass(a) {
				r.hits[i][j].Add(1)
				return c.Class
			}
		}
	}
	c := r.fallback.Classify(a)
	if r.covered[c] && c != ServerError && c != Throttled && c != Info {
		return ClientError
	}
	return c
}

// RuleMatch is one rule and how many answers it classified.
type RuleMatch struct {
	Class Class
	Index int    // the rule's position in its class's list, 0-based
	Rule  string // Rule.String()
	Count int64
}

// Matches lists every rule with its count, in precedence order.
func (r *Rules) Matches() []RuleMatch {
	var out []RuleMatch
	for i, c := range r.classes {
		for j, rule := range c.Rules {
			out = append(out, RuleMatch{Class: c.Class, Index: j, Rule: rule.String(), Count: r.hits[i][j].Load()})
		}
	}
	return out
}

// Unmatched lists the rules that classified no answer yet.
func (r *Rules) Unmatched() []RuleMatch {
	var out []RuleMatch
	for _, m := range r.Matches() {
		if m.Count == 0 {
			out = append(out, m)
		}
	}
	return out
}

// RuleReporter is implemented by classifiers that count their rules' matches (*Rules).
type RuleReporter interface {
	Matches() []RuleMatch
	Unmatched() []RuleMatch
}

package profile

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/transport/mcp"
	"go.yaml.in/yaml/v3"
)

// Outcomes is the profile's `outcomes:` as written: classes in order of precedence, each
// with its rules (package outcome). It parses itself strictly; what is wrong is kept and
// reported with the profile's other field errors.
type Outcomes struct {
	Classes  []outcome.ClassRules
	problems []fieldError
}

// Covers reports whether the rules name class c.
func (o *Outcomes) Covers(c outcome.Class) bool {
	if o == nil {
		return false
	}
	for _, cr := range o.Classes {
		if cr.Class == c && len(cr.Rules) > 0 {
			return true
		}
	}
	return false
}

// declaresRetryHint reports whether a rule of class c says where its answers carry a
// retry hint (retry_after).
func (p *Profile) declaresRetryHint(c outcome.Class) bool {
	if p.Outcomes == nil {
		return false
	}
	for _, cr := range p.Outcomes.Classes {
		if cr.Class != c {
			continue
		}
		for _, r := range cr.Rules {
			if r.RetryAfter != nil {
				return true
			}
		}
	}
	return false
}

// ruleClasses are the classes a rule may name: every class but info, which is what the
// transport reports for an answer it did not see whole.
func ruleClasses() []string {
	var out []string
	for _, c := range outcome.Classes {
		if c != outcome.Info {
			out = append(out, string(c))
		}
	}
	return out
}

// UnmarshalYAML reads `outcomes:` — class: rule, or class: [rule, …]; a rule is a
// mapping of status (an int or a list), json ({path, equals | exists | matches}, or a
// list of them), text (a regexp), header ({name, equals | exists | matches}, or a list
// of them) and, for in_flight and throttled, retry_after ({path, unit}: where the body
// says when to retry).
func (o *Outcomes) UnmarshalYAML(n *yaml.Node) error {
	o.Classes, o.problems = nil, nil
	bad := func(path, format string, args ...any) {
		o.problems = append(o.problems, fieldError{Path: path, Msg: fmt.Sprintf(format, args...)})
	}
	if n.Kind != yaml.MappingNode {
		bad("outcomes", "must map classes to rules, e.g. in_flight: {json: {path: error.code, equals: -32010}}")
		return nil
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		name, v := n.Content[i].Value, n.Content[i+1]
		path := "outcomes." + name
		if c := outcome.Class(name); !c.Valid() || c == outcome.Info {
			bad(path, "unknown class (known: %s)", strings.Join(ruleClasses(), ", "))
			continue
		}
		if seen[name] {
			bad(path, "class named twice")
			continue
		}
		seen[name] = true
		nodes, paths := oneOrList(v, path)
		if len(nodes) == 0 {
			bad(path, "an empty list of rules matches nothing")
		}
		cr := outcome.ClassRules{Class: outcome.Class(name)}
		for j, rn := range nodes {
			spec, ok := o.ruleSpec(rn, paths[j])
			if !ok {
				continue
			}
			rule, errs := outcome.Compile(spec)
			for _, err := range errs {
				var se *outcome.SpecError
				if errors.As(err, &se) {
					field := paths[j]
					if se.Field != "" {
						field = joinPath(field, se.Field)
					}
					bad(field, "%s", se.Msg)
				}
			}
			if rule.RetryAfter != nil && cr.Class != outcome.InFlight && cr.Class != outcome.Throttled {
				bad(joinPath(paths[j], "retry_after"), "a retry hint belongs to an in_flight or throttled rule: only a refusal for now says when to come back")
				continue
			}
			if len(errs) == 0 {
				cr.Rules = append(cr.Rules, rule)
			}
		}
		o.Classes = append(o.Classes, cr)
	}
	return nil
}

func (o *Outcomes) ruleSpec(n *yaml.Node, path string) (outcome.RuleSpec, bool) {
	var spec outcome.RuleSpec
	ok := true
	bad := func(p, format string, args ...any) {
		o.problems = append(o.problems, fieldError{Path: p, Msg: fmt.Sprintf(format, args...)})
		ok = false
	}
	if n.Kind != yaml.MappingNode {
		bad(path, "a rule is a mapping of status, json, text, header, e.g. {status: 409} or {json: {path: error.code, equals: -32010}}")
		return spec, false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i].Value, n.Content[i+1]
		fp := joinPath(path, k)
		switch k {
		case "status":
			items := []*yaml.Node{v}
			if v.Kind == yaml.SequenceNode {
				items = v.Content
			}
			for _, it := range items {
				st, err := strconv.Atoi(it.Value)
				if it.Kind != yaml.ScalarNode || err != nil {
					bad(fp, "must be an HTTP status or a list of them, e.g. 409 or [409, 425], got %q", it.Value)
					continue
				}
				spec.Status = append(spec.Status, st)
			}
		case "json":
			var each bool
			spec.JSON, each = readEach(v, fp, o.jsonSpec)
			ok = ok && each
		case "retry_after":
			if v.Kind != yaml.MappingNode {
				bad(fp, "must be {path: P, unit: ms|s}: where the refusal's body says how long to wait, e.g. {path: error.data.retry_after_ms, unit: ms}")
				continue
			}
			spec.RetryAfter = &outcome.RetryHintSpec{}
			for j := 0; j+1 < len(v.Content); j += 2 {
				hk, hv := v.Content[j].Value, v.Content[j+1]
				switch {
				case hv.Kind != yaml.ScalarNode:
					bad(joinPath(fp, hk), "must be a scalar")
				case hk == "path":
					spec.RetryAfter.Path = hv.Value
				case hk == "unit":
					spec.RetryAfter.Unit = hv.Value
				default:
					bad(joinPath(fp, hk), "unknown field (known: path, unit)")
				}
			}
		case "header":
			var each bool
			spec.Header, each = readEach(v, fp, o.headerSpec)
			ok = ok && each
		case "text":
			if v.Kind != yaml.ScalarNode {
				bad(fp, "must be a regular expression on the body, e.g. \"reused\"")
				continue
			}
			spec.Text = v.Value
			if spec.Text == "" {
				bad(fp, "an empty regexp matches every body")
			}
		default:
			bad(fp, "unknown field (known: header, json, retry_after, status, text)")
		}
	}
	return spec, ok
}

// predicate is one json or header predicate as written: what it tests (a gjson path,
// a header name) and its one test, as YAML read them.
type predicate struct {
	subject string
	equals  *yaml.Node
	exists  *bool
	matches *string
}

// predicate reads a mapping of subjectField (path, name), equals, exists and matches;
// usage is how the mapping is written, for the error when n is none. Compile says what
// a predicate lacks (its subject, exactly one test), under the rule's field name; here
// only what a YAML reader sees.
func (o *Outcomes) predicate(n *yaml.Node, path, subjectField, usage string) (predicate, bool) {
	var pr predicate
	ok := true
	bad := func(p, format string, args ...any) {
		o.problems = append(o.problems, fieldError{Path: p, Msg: fmt.Sprintf(format, args...)})
		ok = false
	}
	if n.Kind != yaml.MappingNode {
		bad(path, "must be %s (or exists: true|false, or matches: REGEXP)", usage)
		return pr, false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i].Value, n.Content[i+1]
		fp := joinPath(path, k)
		if v.Kind != yaml.ScalarNode {
			bad(fp, "must be a scalar")
			continue
		}
		switch k {
		case subjectField:
			pr.subject = v.Value
		case "equals":
			pr.equals = v
		case "exists":
			var b bool
			if err := v.Decode(&b); err != nil {
				bad(fp, "must be true or false, got %q", v.Value)
				continue
			}
			pr.exists = &b
		case "matches":
			m := v.Value
			pr.matches = &m
		default:
			known := []string{"equals", "exists", "matches", subjectField}
			slices.Sort(known)
			bad(fp, "unknown field (known: %s)", strings.Join(known, ", "))
		}
	}
	return pr, ok
}

func (o *Outcomes) jsonSpec(n *yaml.Node, path string) (outcome.JSONSpec, bool) {
	pr, ok := o.predicate(n, path, "path", "{path: …, equals: …}")
	js := outcome.JSONSpec{Path: pr.subject, Exists: pr.exists, Matches: pr.matches}
	if pr.equals != nil {
		var val any
		if err := pr.equals.Decode(&val); err != nil {
			o.problems = append(o.problems, fieldError{Path: joinPath(path, "equals"), Msg: err.Error()})
			return js, false
		}
		js.Equals, js.HasEquals = val, true
	}
	return js, ok
}

func (o *Outcomes) headerSpec(n *yaml.Node, path string) (outcome.HeaderSpec, bool) {
	pr, ok := o.predicate(n, path, "name", "{name: N, equals: V}")
	hs := outcome.HeaderSpec{Name: pr.subject, Exists: pr.exists, Matches: pr.matches}
	if pr.equals != nil {
		value := pr.equals.Value // a header's value is text, whatever YAML would make of it
		hs.Equals = &value
	}
	return hs, ok
}

// checkSharedStatusRules refuses, where expect.in_flight and expect.mismatch are one
// status, an in_flight or mismatch rule that tests that status alone: it takes every
// answer of the status for its class, so the other class is never seen, and the rules
// do not tell the two apart after all.
func checkSharedStatusRules(p *Profile) []fieldError {
	if p.Outcomes == nil {
		return nil
	}
	shared := p.Expect.InFlight
	other := map[outcome.Class]outcome.Class{outcome.InFlight: outcome.Mismatch, outcome.Mismatch: outcome.InFlight}
	var errs []fieldError
	for _, cr := range p.Outcomes.Classes {
		o, ok := other[cr.Class]
		if !ok {
			continue
		}
		for i, r := range cr.Rules {
			if len(r.JSON) > 0 || r.Text != nil || len(r.Header) > 0 || (len(r.Status) > 0 && !slices.Contains(r.Status, shared)) {
				continue
			}
			path := "outcomes." + string(cr.Class)
			if len(cr.Rules) > 1 {
				path += "[" + strconv.Itoa(i) + "]"
			}
			errs = append(errs, fieldError{Path: path, Msg: fmt.Sprintf("tests status %d alone, which expect.in_flight and expect.mismatch share: it takes every %d as %s, and none is ever %s; add a json, text or header predicate that tells the two apart", shared, shared, cr.Class, o)})
		}
	}
	return errs
}

// oneOrList is a value written as one item or a list of them, with each item's path.
func oneOrList(v *yaml.Node, path string) ([]*yaml.Node, []string) {
	if v.Kind != yaml.SequenceNode {
		return []*yaml.Node{v}, []string{path}
	}
	paths := make([]string, len(v.Content))
	for j := range v.Content {
		paths[j] = path + "[" + strconv.Itoa(j) + "]"
	}
	return v.Content, paths
}

// readEach reads a value written as one item or a list of them with read; ok is false
// when any item was wrong.
func readEach[T any](v *yaml.Node, path string, read func(*yaml.Node, string) (T, bool)) ([]T, bool) {
	items, paths := oneOrList(v, path)
	out, ok := make([]T, 0, len(items)), true
	for j, it := range items {
		x, itemOK := read(it, paths[j])
		ok = ok && itemOK
		out = append(out, x)
	}
	return out, ok
}

// OutcomeHeaders names the headers the profile's outcome rules read, in the order they
// first appear: the runner keeps them in each attempt's evidence, so an answer told by
// a header shows it, and can be classed again from the record.
func (p *Profile) OutcomeHeaders() []string {
	if p.Outcomes == nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, cr := range p.Outcomes.Classes {
		for _, r := range cr.Rules {
			for _, h := range r.Header {
				name := http.CanonicalHeaderKey(h.Name)
				if !seen[name] {
					seen[name] = true
					out = append(out, name)
				}
			}
		}
	}
	return out
}

// mergeOutcomes fixes what mergeMappings did to `outcomes:` under `extends:`: a class the
// profile names replaces the preset's rules for it whole (merging two rules field by field
// would make a third that neither wrote); the other classes stay, in the preset's order.
func mergeOutcomes(merged, base, over *yaml.Node) *yaml.Node {
	bo, oo := findKey(base, "outcomes"), findKey(over, "outcomes")
	if bo == nil || oo == nil || bo.Kind != yaml.MappingNode || oo.Kind != yaml.MappingNode {
		return merged
	}
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: oo.Line, Column: oo.Column}
	out.Content = append(out.Content, bo.Content...)
	for i := 0; i+1 < len(oo.Content); i += 2 {
		k, v := oo.Content[i], oo.Content[i+1]
		replaced := false
		for j := 0; j+1 < len(out.Content); j += 2 {
			if out.Content[j].Value == k.Value {
				out.Content[j], out.Content[j+1], replaced = k, v, true
			}
		}
		if !replaced {
			out.Content = append(out.Content, k, v)
		}
	}
	for i := 0; i+1 < len(merged.Content); i += 2 {
		if merged.Content[i].Value == "outcomes" {
			merged.Content[i+1] = out
		}
	}
	return merged
}

// MarshalJSON writes the rules as the classes in order, each with its rules described.
func (o *Outcomes) MarshalJSON() ([]byte, error) {
	type class struct {
		Class outcome.Class `json:"class"`
		Rules []string      `json:"rules"`
	}
	out := []class{}
	for _, c := range o.Classes {
		cl := class{Class: c.Class, Rules: []string{}}
		for _, r := range c.Rules {
			cl.Rules = append(cl.Rules, r.String())
		}
		out = append(out, cl)
	}
	return json.Marshal(out)
}

// Classifier returns how the profile's answers are classified. Without outcome rules
// (and over plain HTTP), by the statuses it declares (expect, business_error,
// validation_error). With `outcomes:`, by its rules in their order, the classes they do
// not cover by those statuses; over MCP, a tool result (isError true: a business error)
// is recognised for the classes the rules leave out (mcp.DefaultOutcomes). Each call
// returns a new classifier, whose rule matches (outcome.RuleReporter) count from zero.
func (p *Profile) Classifier() outcome.Classifier {
	s := outcome.Statuses{InFlight: p.Expect.InFlight, Mismatch: p.Expect.Mismatch}
	if p.Expect.MissingKey != "" && p.Expect.MissingKey != "optional" {
		s.MissingKey = atoiOr0(p.Expect.MissingKey)
	}
	if p.Business != nil {
		s.Business = p.Business.Status
	}
	if p.Validation != nil {
		s.Validation = p.Validation.Status
	}
	if p.Outcomes == nil && !p.IsMCP() {
		return s
	}
	var classes []outcome.ClassRules
	covered := map[outcome.Class]bool{}
	if p.Outcomes != nil {
		classes = append(classes, p.Outcomes.Classes...)
		for _, c := range p.Outcomes.Classes {
			covered[c.Class] = len(c.Rules) > 0
		}
	}
	if p.IsMCP() {
		classes = append(classes, mcp.DefaultOutcomes(covered)...)
	}
	return outcome.NewRules(classes, statusesOutside(s, covered))
}

// statusesOutside is the status fallback without the classes the rules cover: such a
// class is recognised by its rules alone, so its status is left to the classes that share
// it. One status for in flight and mismatch (409 for both, told apart by a header or a
// code in the body) with rules for only one of them makes every other answer of that
// status the other class, not an answer the profile does not name.
func statusesOutside(s outcome.Statuses, covered map[outcome.Class]bool) outcome.Statuses {
	for class, status := range map[outcome.Class]*int{
		outcome.InFlight: &s.InFlight, outcome.Mismatch: &s.Mismatch, outcome.MissingKey: &s.MissingKey,
		outcome.BusinessError: &s.Business, outcome.ValidationError: &s.Validation,
	} {
		if covered[class] {
			*status = 0
		}
	}
	return s
}

// UnmatchedRules names the profile's own outcome rules that classified none of the
// answers cl saw — cl a classifier from Classifier(), through which the preflight (or a
// run) passed its answers: "outcomes.success (result.isError == false)",
// "outcomes.mismatch[1] (result.isError == true and text /reused/)". A rule that never
// matches is often a rule that cannot: a field the server leaves out, a code it never
// sends. The built-in MCP defaults are not named; nil for a classifier without rules.
func (p *Profile) UnmatchedRules(cl outcome.Classifier) []string {
	rep, ok := cl.(outcome.RuleReporter)
	if !ok || p.Outcomes == nil {
		return nil
	}
	own := map[outcome.Class]int{}
	for _, c := range p.Outcomes.Classes {
		own[c.Class] = len(c.Rules)
	}
	var out []string
	for _, m := range rep.Unmatched() {
		n, mine := own[m.Class]
		if !mine {
			continue
		}
		name := "outcomes." + string(m.Class)
		if n > 1 {
			name += "[" + strconv.Itoa(m.Index) + "]"
		}
		out = append(out, name+" ("+m.Rule+")")
	}
	return out
}

func atoiOr0(s string) int {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int(c-'0')
	}
	return n
}

package faultproxy

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"path"
	"strings"
)

// compileRule checks a rule and builds its fault. Errors are *RuleError carrying the field.
func compileRule(reg Registry, r Rule, index int) (*activeRule, error) {
	var f Fault
	ar, err := compileChecked(r, index, func(spec FaultSpec) (err error) {
		f, err = reg.Build(spec)
		return err
	})
	if err != nil {
		return nil, err
	}
	ar.fault = f
	return ar, nil
}

// compileChecked checks a rule's fields, and its fault with checkFault, and compiles its
// match; the fault itself is left to the caller (an Engine's layer builds its own).
func compileChecked(r Rule, index int, checkFault func(FaultSpec) error) (*activeRule, error) {
	fail := func(err error) (*activeRule, error) {
		re := &RuleError{Index: index, Name: r.Name, Err: err}
		var fe *FieldError
		if errors.As(err, &fe) {
			re.Field = fe.Field
		}
		return nil, re
	}
	if err := checkRuleFields(r); err != nil {
		return fail(err)
	}
	if err := checkFault(r.Fault); err != nil {
		return fail(err)
	}
	return &activeRule{rule: r, match: compileMatch(r.Match)}, nil
}

func checkRuleFields(r Rule) error {
	switch {
	case r.Name == "":
		return &FieldError{Field: "name", Msg: "required: a unique name for the rule"}
	case len(r.Name) > 128 || strings.ContainsAny(r.Name, "/?#%") || strings.TrimSpace(r.Name) != r.Name || hasControl(r.Name):
		return &FieldError{Field: "name", Msg: "use at most 128 printable characters without / ? # % or surrounding spaces"}
	case r.Count < 0:
		return &FieldError{Field: "count", Msg: fmt.Sprintf("must be >= 0 (0 = no limit), got %d", r.Count)}
	case math.IsNaN(r.Probability) || r.Probability < 0 || r.Probability > 1:
		return &FieldError{Field: "probability", Msg: fmt.Sprintf("must be in [0,1] (0 = always), got %v", r.Probability)}
	}
	return checkMatch(r.Match)
}

func checkMatch(m Match) error {
	if m.Method != "" && !isToken(m.Method) {
		return &FieldError{Field: "match.method", Msg: fmt.Sprintf("%q is not an HTTP method", m.Method)}
	}
	if m.Path != "" {
		if _, err := path.Match(m.Path, ""); err != nil {
			return &FieldError{Field: "match.path", Msg: fmt.Sprintf("bad glob %q: %v", m.Path, err)}
		}
	}
	for name := range m.Headers {
		if !isToken(name) {
			return &FieldError{Field: "match.headers", Msg: fmt.Sprintf("%q is not a header name", name)}
		}
	}
	if m.Key != "" {
		if _, err := path.Match(m.Key, ""); err != nil {
			return &FieldError{Field: "match.key", Msg: fmt.Sprintf("bad glob %q: %v", m.Key, err)}
		}
		if m.NoKey {
			return &FieldError{Field: "match.no_key", Msg: "cannot be combined with match.key"}
		}
	}
	if a := m.Attempts; a != nil {
		if m.NoKey {
			return &FieldError{Field: "match.no_key", Msg: "cannot be combined with match.attempts (attempts are counted per key)"}
		}
		if a.From < 1 {
			return &FieldError{Field: "match.attempts.from", Msg: fmt.Sprintf("attempts are numbered from 1, got %d", a.From)}
		}
		if a.To != 0 && a.To < a.From {
			return &FieldError{Field: "match.attempts.to", Msg: fmt.Sprintf("must be 0 (unbounded) or >= from (%d), got %d", a.From, a.To)}
		}
	}
	return nil
}

// isToken reports whether s is an RFC 9110 token (methods and header names).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 || c <= 0x20 || c == 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

func hasControl(s string) bool {
	for _, c := range s {
		if c < 0x20 || c == 0x7f {
			return true
		}
	}
	return false
}

// canonicalHeaders returns the header names of a Match in canonical form, so matching
// does not depend on how the rule spelled them.
func canonicalHeaders(h map[string]string) map[string]string {
	if len(h) == 0 {
		return nil
	}
	out := make(map[string]string, len(h))
	for k, v := range h {
		out[http.CanonicalHeaderKey(k)] = v
	}
	return out
}

package faultproxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// FieldError says which field of a rule is wrong and how to fix it. Field is a dotted
// path in the rule's JSON shape ("fault.status", "match.attempts.from").
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// RuleError is a rejected rule: its position in a list (-1 when added alone), its name,
// and the field at fault. Admin responses carry Field as "field".
type RuleError struct {
	Index int
	Name  string
	Field string
	Err   error
}

func (e *RuleError) Error() string {
	var where string
	switch {
	case e.Index >= 0 && e.Name != "":
		where = fmt.Sprintf("rule %d (%q)", e.Index, e.Name)
	case e.Index >= 0:
		where = fmt.Sprintf("rule %d", e.Index)
	case e.Name != "":
		where = fmt.Sprintf("rule %q", e.Name)
	default:
		where = "rule"
	}
	return where + ": " + e.Err.Error()
}

func (e *RuleError) Unwrap() error { return e.Err }

// ErrRuleExists is returned (wrapped in a *RuleError) when a rule name is already in use.
var ErrRuleExists = errors.New("a rule with this name exists; delete it first or choose another name")

// ErrTooManyRules is returned (wrapped in a *RuleError) when adding would take the proxy
// past MaxRules rules.
var ErrTooManyRules = fmt.Errorf("a proxy holds at most %d rules; delete rules (DELETE /rules/{name}) or POST /reset first", MaxRules)

// ErrRuleNotFound is returned by DeleteRule for an unknown name.
var ErrRuleNotFound = errors.New("no rule with this name")

// strictJSON decodes one JSON value refusing unknown fields and trailing data.
func strictJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errTrailing
	}
	return nil
}

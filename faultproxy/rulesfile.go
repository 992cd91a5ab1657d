package faultproxy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"go.yaml.in/yaml/v3"
)

// ParseRulesJSON reads one rule (a JSON object) or a list of rules (a JSON array),
// refusing unknown fields, and checks each one; an error is a *RuleError naming the index
// (in a list) and the field.
func ParseRulesJSON(b []byte) ([]Rule, error) {
	rules, err := decodeRulesJSON(b)
	if err != nil {
		return nil, err
	}
	return rules, checkRules(rules, len(rules) > 1)
}

// decodeRulesJSON reads one rule or a list without checking them (the admin API checks
// against the proxy's own registry).
func decodeRulesJSON(b []byte) ([]Rule, error) {
	b = bytes.TrimSpace(b)
	var rules []Rule
	if len(b) > 0 && b[0] == '[' {
		if err := strictJSON(b, &rules); err != nil {
			return nil, parseError(-1, err)
		}
	} else {
		var r Rule
		if err := strictJSON(b, &r); err != nil {
			return nil, parseError(-1, err)
		}
		rules = []Rule{r}
	}
	return rules, nil
}

// ParseRulesYAML reads a YAML list of rules of the JSON shape (duration_ms for
// durations), refusing unknown fields, and checks each rule and the names' uniqueness.
func ParseRulesYAML(b []byte) ([]Rule, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var rules []Rule
	if err := dec.Decode(&rules); err != nil && !errors.Is(err, io.EOF) {
		return nil, parseError(-1, err)
	}
	return rules, checkRules(rules, true)
}

// ReadRulesFile reads a YAML rules file (ParseRulesYAML).
func ReadRulesFile(path string) ([]Rule, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read rules: %w", err)
	}
	rules, err := ParseRulesYAML(b)
	if err != nil {
		return nil, fmt.Errorf("rules file %s: %w", path, err)
	}
	return rules, nil
}

func parseError(index int, err error) error {
	re := &RuleError{Index: index, Err: err}
	var fe *FieldError
	if errors.As(err, &fe) {
		re.Field = fe.Field
	}
	return re
}

// checkRules validates each rule against the built-in faults and the uniqueness of names.
func checkRules(rules []Rule, indexed bool) error {
	reg := DefaultFaults()
	seen := make(map[string]int, len(rules))
	for i, r := range rules {
		idx := -1
		if indexed {
			idx = i
		}
		if _, err := compileRule(reg, r, idx); err != nil {
			return err
		}
		if j, dup := seen[r.Name]; dup {
			return &RuleError{Index: idx, Name: r.Name, Field: "name", Err: fmt.Errorf("%w (rule %d has it too)", ErrRuleExists, j)}
		}
		seen[r.Name] = i
	}
	return nil
}

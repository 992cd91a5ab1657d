package faultproxy

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"go.yaml.in/yaml/v3"
)

// ParseRulesJSON reads one rule (a JSON object) or a list of rules (a JSON array) and
// checks each one. Field names are case-sensitive; unknown or repeated fields, values of
// the wrong kind and data after the value are refused. An error is a *RuleError naming
// the index (in a list) and the field, the same as ParseRulesYAML gives for the same
// mistake.
func ParseRulesJSON(b []byte) ([]Rule, error) {
	rules, err := decodeRulesJSON(b)
	if err != nil {
		return nil, err
	}
	return rules, checkRules(rules, isArray(b))
}

// decodeRulesJSON reads one rule or a list strictly without checking the rules' values
// (the admin API checks them against the proxy's own registry).
func decodeRulesJSON(b []byte) ([]Rule, error) {
	t, err := jsonTree(b)
	if err != nil {
		return nil, &RuleError{Index: -1, Err: fmt.Errorf("invalid JSON: %w", err)}
	}
	if t.kind != treeArray {
		if err := checkRuleTree(t, -1); err != nil {
			return nil, err
		}
		var r Rule
		if err := strictJSON(b, &r); err != nil {
			return nil, decodeError(-1, t, err)
		}
		return []Rule{r}, nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(b, &raws); err != nil {
		return nil, &RuleError{Index: -1, Err: err}
	}
	rules := make([]Rule, len(raws))
	for i, raw := range raws {
		if err := checkRuleTree(t.values[i], i); err != nil {
			return nil, err
		}
		if err := strictJSON(raw, &rules[i]); err != nil {
			return nil, decodeError(i, t.values[i], err)
		}
	}
	return rules, nil
}

// ParseRulesYAML reads a YAML list of rules of the JSON shape (duration_ms for
// durations) under the same strict schema as ParseRulesJSON, and checks each rule and the
// names' uniqueness.
func ParseRulesYAML(b []byte) ([]Rule, error) { return parseRulesYAML(b, nil) }

// parseRulesYAML is ParseRulesYAML with the faults checked by checkFault (nil: the
// built-in faults).
func parseRulesYAML(b []byte, checkFault func(FaultSpec) error) ([]Rule, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, &RuleError{Index: -1, Err: err}
	}
	t, err := yamlTree(&doc, 0)
	if err != nil {
		return nil, &RuleError{Index: -1, Err: err}
	}
	if t.kind == treeNull {
		return nil, nil
	}
	if t.kind != treeArray {
		return nil, &RuleError{Index: -1, Err: errors.New("a rules file is a YAML list of rules (- name: ...)")}
	}
	list := doc.Content[0]
	for list.Kind == yaml.AliasNode {
		list = list.Alias
	}
	rules := make([]Rule, len(list.Content))
	for i, item := range list.Content {
		if err := checkRuleTree(t.values[i], i); err != nil {
			return nil, err
		}
		if err := item.Decode(&rules[i]); err != nil {
			return nil, decodeError(i, t.values[i], err)
		}
	}
	return rules, checkRulesWith(rules, true, checkFault)
}

// decodeError is a value the schema let through but decoding refused (a duration out of
// range).
func decodeError(index int, t *tree, err error) error {
	re := parseError(index, err).(*RuleError)
	re.Name = t.ruleName()
	return re
}

// ReadRulesFile reads a YAML rules file (ParseRulesYAML).
func ReadRulesFile(path string) ([]Rule, error) { return ReadRulesFileFor(path, nil) }

// ReadRulesFileFor reads a YAML rules file whose faults a layer of another medium applies:
// checkFault says which (an Engine's CheckFault); nil means the proxy's built-in faults.
func ReadRulesFileFor(path string, checkFault func(FaultSpec) error) ([]Rule, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read rules: %w", err)
	}
	rules, err := parseRulesYAML(b, checkFault)
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
func checkRules(rules []Rule, indexed bool) error { return checkRulesWith(rules, indexed, nil) }

// checkRulesWith is checkRules with the faults checked by checkFault (nil: the built-in
// faults).
func checkRulesWith(rules []Rule, indexed bool, checkFault func(FaultSpec) error) error {
	if checkFault == nil {
		reg := DefaultFaults()
		checkFault = func(spec FaultSpec) error { _, err := reg.Build(spec); return err }
	}
	seen := make(map[string]int, len(rules))
	for i, r := range rules {
		idx := -1
		if indexed {
			idx = i
		}
		if _, err := compileChecked(r, idx, checkFault); err != nil {
			return err
		}
		if j, dup := seen[r.Name]; dup {
			return &RuleError{Index: idx, Name: r.Name, Field: "name", Err: fmt.Errorf("%w (rule %d has it too)", ErrRuleExists, j)}
		}
		seen[r.Name] = i
	}
	return nil
}

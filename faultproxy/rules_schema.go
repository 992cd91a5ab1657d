package faultproxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// A rule arrives as JSON (the admin API) or YAML (a rules file). Both are checked against
// one schema before they are decoded, so that the same typo gets the same error in both
// (the field path and the rule's index), and so that what encoding/json alone would let
// through is refused: field names in another case (it matches them case-insensitively),
// a field given twice (it keeps the last), a value of the wrong kind.

// valueKind is the kind of value a rule field takes.
type valueKind int

const (
	kindString valueKind = iota
	kindInteger
	kindNumber
	kindBool
	kindObject    // fields named in schemaField.fields
	kindStringMap // any names (header names), string values
)

func (k valueKind) String() string {
	return [...]string{"a string", "an integer", "a number", "true or false", "an object", "an object of strings"}[k]
}

type schemaField struct {
	kind   valueKind
	fields map[string]schemaField // kindObject
}

var ruleSchema = schemaField{kind: kindObject, fields: map[string]schemaField{
	"name": {kind: kindString},
	"match": {kind: kindObject, fields: map[string]schemaField{
		"method":  {kind: kindString},
		"path":    {kind: kindString},
		"headers": {kind: kindStringMap},
		"key":     {kind: kindString},
		"no_key":  {kind: kindBool},
		"attempts": {kind: kindObject, fields: map[string]schemaField{
			"from": {kind: kindInteger},
			"to":   {kind: kindInteger},
		}},
	}},
	"fault": {kind: kindObject, fields: map[string]schemaField{
		"type":         {kind: kindString},
		"status":       {kind: kindInteger},
		"body":         {kind: kindString},
		"content_type": {kind: kindString},
		"jsonrpc_id":   {kind: kindBool},
		"retry_after":  {kind: kindInteger},
		"headers":      {kind: kindStringMap},
		"bytes":        {kind: kindInteger},
		"duration_ms":  {kind: kindNumber},
		"then":         {kind: kindString},
		"mode":         {kind: kindString},
	}},
	"count":       {kind: kindInteger},
	"probability": {kind: kindNumber},
}}

// treeKind is what a parsed value is, whichever format it came in.
type treeKind int

const (
	treeNull treeKind = iota
	treeString
	treeNumber
	treeBool
	treeObject
	treeArray
)

// tree is a parsed JSON or YAML value with its object members in order (duplicates kept,
// so they can be refused).
type tree struct {
	kind    treeKind
	text    string // scalars
	integer bool   // treeNumber: an integer
	keys    []string
	values  []*tree // object members, or array items
}

var errTrailing = errors.New("unexpected data after the JSON value")

// jsonTree parses exactly one JSON value (trailing data is an error).
func jsonTree(b []byte) (*tree, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	t, err := jsonValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errTrailing
	}
	return t, nil
}

// maxTreeDepth bounds nesting (a rule is three levels deep).
const maxTreeDepth = 32

func jsonValue(dec *json.Decoder, depth int) (*tree, error) {
	if depth > maxTreeDepth {
		return nil, fmt.Errorf("nested deeper than %d levels", maxTreeDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty body: want a rule object or an array of rules")
		}
		return nil, err
	}
	switch v := tok.(type) {
	case nil:
		return &tree{kind: treeNull}, nil
	case string:
		return &tree{kind: treeString, text: v}, nil
	case bool:
		return &tree{kind: treeBool, text: strconv.FormatBool(v)}, nil
	case json.Number:
		_, intErr := strconv.ParseInt(v.String(), 10, 64)
		return &tree{kind: treeNumber, text: v.String(), integer: intErr == nil}, nil
	case json.Delim:
		t := &tree{kind: treeArray}
		if v == '{' {
			t.kind = treeObject
		}
		for dec.More() {
			if t.kind == treeObject {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				t.keys = append(t.keys, k.(string))
			}
			item, err := jsonValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			t.values = append(t.values, item)
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return nil, err
		}
		return t, nil
	}
	return nil, fmt.Errorf("unexpected JSON token %v", tok)
}

// yamlTree converts a YAML node (aliases resolved, depth bounded).
func yamlTree(n *yaml.Node, depth int) (*tree, error) {
	if depth > maxTreeDepth {
		return nil, fmt.Errorf("nested deeper than %d levels", maxTreeDepth)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return &tree{kind: treeNull}, nil
		}
		return yamlTree(n.Content[0], depth)
	case yaml.AliasNode:
		return yamlTree(n.Alias, depth+1)
	case yaml.MappingNode:
		t := &tree{kind: treeObject}
		for i := 0; i+1 < len(n.Content); i += 2 {
			v, err := yamlTree(n.Content[i+1], depth+1)
			if err != nil {
				return nil, err
			}
			t.keys = append(t.keys, n.Content[i].Value)
			t.values = append(t.values, v)
		}
		return t, nil
	case yaml.SequenceNode:
		t := &tree{kind: treeArray}
		for _, c := range n.Content {
			v, err := yamlTree(c, depth+1)
			if err != nil {
				return nil, err
			}
			t.values = append(t.values, v)
		}
		return t, nil
	}
	switch n.ShortTag() {
	case "!!null":
		return &tree{kind: treeNull}, nil
	case "!!bool":
		return &tree{kind: treeBool, text: n.Value}, nil
	case "!!int":
		return &tree{kind: treeNumber, text: n.Value, integer: true}, nil
	case "!!float":
		return &tree{kind: treeNumber, text: n.Value}, nil
	}
	return &tree{kind: treeString, text: n.Value}, nil
}

// checkSchema refuses unknown or repeated field names, names in another case, and values
// of the wrong kind; path is the dotted field path so far ("" at a rule's top).
func checkSchema(t *tree, f schemaField, path string) *FieldError {
	at := func(name string) string {
		if path == "" {
			return name
		}
		return path + "." + name
	}
	if t.kind == treeNull {
		return nil // absent
	}
	switch f.kind {
	case kindString:
		if t.kind != treeString {
			return wrongKind(path, f.kind, t)
		}
	case kindInteger:
		if t.kind != treeNumber || !t.integer {
			return wrongKind(path, f.kind, t)
		}
	case kindNumber:
		if t.kind != treeNumber {
			return wrongKind(path, f.kind, t)
		}
	case kindBool:
		if t.kind != treeBool {
			return wrongKind(path, f.kind, t)
		}
	case kindStringMap:
		if t.kind != treeObject {
			return wrongKind(path, f.kind, t)
		}
		seen := make(map[string]bool, len(t.keys))
		for i, k := range t.keys {
			if t.values[i].kind != treeString && t.values[i].kind != treeNull {
				return wrongKind(at(k), kindString, t.values[i])
			}
			if c := http.CanonicalHeaderKey(k); seen[c] {
				return &FieldError{Field: at(k), Msg: "given twice (header names are case-insensitive)"}
			} else {
				seen[c] = true
			}
		}
	case kindObject:
		if t.kind != treeObject {
			return wrongKind(path, f.kind, t)
		}
		seen := make(map[string]bool, len(t.keys))
		for i, k := range t.keys {
			sub, ok := f.fields[k]
			if !ok {
				return &FieldError{Field: at(k), Msg: "unknown field; " + knownFields(path, f)}
			}
			if seen[k] {
				return &FieldError{Field: at(k), Msg: "given twice; give each field once"}
			}
			seen[k] = true
			if err := checkSchema(t.values[i], sub, at(k)); err != nil {
				return err
			}
		}
	}
	return nil
}

func knownFields(path string, f schemaField) string {
	names := make([]string, 0, len(f.fields))
	for n := range f.fields {
		names = append(names, n)
	}
	sort.Strings(names)
	what := "a rule"
	if path != "" {
		what = path
	}
	return what + " takes " + strings.Join(names, ", ") + " (names are case-sensitive)"
}

func wrongKind(path string, want valueKind, t *tree) *FieldError {
	got := [...]string{"null", "a string", "a number", "a boolean", "an object", "a list"}[t.kind]
	if t.kind == treeString || t.kind == treeNumber {
		text := t.text
		if len(text) > 40 {
			text = text[:40] + "..."
		}
		got += " " + strconv.Quote(text)
	}
	return &FieldError{Field: path, Msg: fmt.Sprintf("want %s, got %s", want, got)}
}

// ruleName is a rule tree's name, when it has a string one (for error messages).
func (t *tree) ruleName() string {
	if t.kind != treeObject {
		return ""
	}
	for i, k := range t.keys {
		if k == "name" && t.values[i].kind == treeString {
			return t.values[i].text
		}
	}
	return ""
}

// checkRuleTree checks one rule's tree; index is its position in a list (-1 alone).
func checkRuleTree(t *tree, index int) error {
	if t.kind != treeObject {
		return &RuleError{Index: index, Err: fmt.Errorf("want a rule object, got %s", [...]string{"null", "a string", "a number", "a boolean", "an object", "a list"}[t.kind])}
	}
	if fe := checkSchema(t, ruleSchema, ""); fe != nil {
		return &RuleError{Index: index, Name: t.ruleName(), Field: fe.Field, Err: fe}
	}
	return nil
}

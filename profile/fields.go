package profile

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

var (
	profileType  = reflect.TypeOf(Profile{})
	durationType = reflect.TypeOf(Duration(0))
	outcomesType = reflect.TypeOf(Outcomes{}) // parses strictly itself (outcomes.go)
)

// checkFields reports mapping keys the profile format does not have (so a typo such as
// `retenion: 1s` is an error instead of a silently undeclared capability) and scalars
// that are not a duration or an integer where one is expected. A bad scalar is replaced
// by a zero value, so decoding goes on and every other problem is reported too.
func checkFields(n *yaml.Node, t reflect.Type, path string) []fieldError {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var errs []fieldError
	switch {
	case t == outcomesType:
	case n.Kind == yaml.ScalarNode && t == durationType:
		if _, err := parseDuration(n.Value); err != nil {
			errs = append(errs, fieldError{Path: path, Line: n.Line, Msg: err.Error()})
			n.Value, n.Tag = "0s", "!!str"
		}
	case n.Kind == yaml.ScalarNode && t.Kind() == reflect.Int:
		if _, err := strconv.Atoi(n.Value); err != nil {
			errs = append(errs, fieldError{Path: path, Line: n.Line, Msg: fmt.Sprintf("must be an integer (an HTTP status), got %q", n.Value)})
			n.Value, n.Tag = "0", "!!int"
		}
	case n.Kind == yaml.ScalarNode && t.Kind() == reflect.Bool:
		var b bool
		if err := n.Decode(&b); err != nil {
			errs = append(errs, fieldError{Path: path, Line: n.Line, Msg: fmt.Sprintf("must be true or false, got %q", n.Value)})
			n.Value, n.Tag = "false", "!!bool"
		}
	case n.Kind == yaml.MappingNode && t.Kind() == reflect.Struct:
		fields := yamlFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			ft, ok := fields[k]
			if !ok {
				errs = append(errs, fieldError{Path: joinPath(path, k), Line: n.Content[i].Line,
					Msg: "unknown field (known: " + strings.Join(sortedKeys(fields), ", ") + ")"})
				continue
			}
			errs = append(errs, checkFields(n.Content[i+1], ft, joinPath(path, k))...)
		}
	case n.Kind == yaml.SequenceNode && t.Kind() == reflect.Slice:
		for i, c := range n.Content {
			errs = append(errs, checkFields(c, t.Elem(), path+"["+strconv.Itoa(i)+"]")...)
		}
	}
	return errs
}

// yamlFields maps the yaml names of a struct's fields (inline structs flattened) to types.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if strings.Contains(opts, "inline") {
			for k, v := range yamlFields(f.Type) {
				out[k] = v
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = f.Type
	}
	return out
}

func sortedKeys(m map[string]reflect.Type) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// InFlightWaitValue is the `expect.in_flight` value that declares the block-and-replay
// school: a repeat during the original waits and receives the committed response.
const InFlightWaitValue = "wait"

// takeInFlightWait reads `expect.in_flight`, which is a status or "wait": "wait" is
// replaced by 0 in the tree (so the integer field decodes) and reported as true; a
// value that is neither is a field error naming both forms.
func takeInFlightWait(root *yaml.Node) (bool, []fieldError) {
	expect := mappingValue(root, "expect")
	if expect == nil {
		return false, nil
	}
	v := mappingValue(expect, "in_flight")
	if v == nil || v.Kind != yaml.ScalarNode {
		return false, nil
	}
	if v.Value == InFlightWaitValue {
		v.Value, v.Tag = "0", "!!int"
		return true, nil
	}
	if _, err := strconv.Atoi(v.Value); err != nil {
		e := fieldError{Path: "expect.in_flight", Line: v.Line,
			Msg: fmt.Sprintf("must be a 4xx status (409 in draft-07 and Stripe) or %q (a repeat waits and gets the committed response), got %q", InFlightWaitValue, v.Value)}
		v.Value, v.Tag = "0", "!!int"
		return false, []fieldError{e}
	}
	return false, nil
}

// mappingValue returns the value node of key in a mapping node (nil when absent).
func mappingValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

package scenarios

import (
	"reflect"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

var profileType = reflect.TypeOf(Profile{})

// unknownFields reports mapping keys the profile format does not have, so a typo such as
// `retenion: 1s` is an error instead of a silently undeclared capability.
func unknownFields(n *yaml.Node, t reflect.Type, path string) []fieldError {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var errs []fieldError
	switch {
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
			errs = append(errs, unknownFields(n.Content[i+1], ft, joinPath(path, k))...)
		}
	case n.Kind == yaml.SequenceNode && t.Kind() == reflect.Slice:
		for _, c := range n.Content {
			errs = append(errs, unknownFields(c, t.Elem(), path+"[]")...)
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

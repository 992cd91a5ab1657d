package scan

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// maxSchemaDepth bounds how deep a schema is walked: deeper nesting, or a $ref cycle, is
// left alone.
const maxSchemaDepth = 24

// jsonTypes are the type names JSON Schema knows.
var jsonTypes = map[string]bool{"object": true, "array": true, "string": true, "number": true, "integer": true, "boolean": true, "null": true}

// readToolSchema reads an MCP tool's inputSchema (as the SDK's client decoded it) into
// kin-openapi's schema model, the one the argument builder reads for OpenAPI too, with its
// local references (#/$defs/…, #/definitions/…) resolved. An error names the member that
// cannot be read: "properties.amount.type: …".
func readToolSchema(raw any) (*openapi3.Schema, error) {
	if raw == nil {
		return nil, errors.New("the tool has no inputSchema")
	}
	data, err := json.Marshal(raw)
	if err != nil {
		return nil, fmt.Errorf("inputSchema: %w", err)
	}
	var s openapi3.Schema
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, culprit(data, err)
	}
	defs := s.Defs
	if len(defs) == 0 {
		// Draft-07's name for the same thing, kept by kin-openapi as an extension.
		if d, ok := s.Extensions["definitions"]; ok {
			if b, err := json.Marshal(d); err == nil {
				_ = json.Unmarshal(b, &defs)
			}
		}
	}
	if err := resolveLocal(&openapi3.SchemaRef{Value: &s}, defs, "inputSchema", 0); err != nil {
		return nil, err
	}
	if t := s.Type; t != nil && !t.Includes("object") {
		return nil, fmt.Errorf("inputSchema.type: %q, want \"object\" (tool arguments are a JSON object)", strings.Join(*t, ","))
	}
	return &s, nil
}

// culprit names the property whose schema does not decode, when one is to blame.
func culprit(data []byte, err error) error {
	var top struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(data, &top) == nil {
		for _, name := range sortedNames(top.Properties) {
			var s openapi3.Schema
			if perr := json.Unmarshal(top.Properties[name], &s); perr != nil {
				return fmt.Errorf("inputSchema.properties.%s: %v", name, perr)
			}
		}
	}
	return fmt.Errorf("inputSchema: %v", err)
}

// resolveLocal fills the Value of every reference inside ref from defs, and checks every
// type name; path names where it is, for the error.
func resolveLocal(ref *openapi3.SchemaRef, defs openapi3.Schemas, path string, depth int) error {
	if ref == nil || depth > maxSchemaDepth {
		return nil
	}
	if ref.Value == nil && ref.Ref != "" {
		name, ok := strings.CutPrefix(ref.Ref, "#/$defs/")
		if !ok {
			name, ok = strings.CutPrefix(ref.Ref, "#/definitions/")
		}
		target := defs[name]
		if !ok || target == nil || target.Value == nil {
			return fmt.Errorf("%s: $ref %q names nothing in the schema's own $defs", path, ref.Ref)
		}
		ref.Value = target.Value
	}
	s := ref.Value
	if s == nil {
		return nil
	}
	if s.Type != nil {
		for _, t := range *s.Type {
			if !jsonTypes[t] {
				return fmt.Errorf("%s.type: unknown type %q (JSON Schema knows object, array, string, number, integer, boolean, null)", path, t)
			}
		}
	}
	for _, name := range sortedNames(s.Properties) {
		if err := resolveLocal(s.Properties[name], defs, path+".properties."+name, depth+1); err != nil {
			return err
		}
	}
	if err := resolveLocal(s.Items, defs, path+".items", depth+1); err != nil {
		return err
	}
	for _, alt := range []struct {
		kw   string
		list openapi3.SchemaRefs
	}{{"allOf", s.AllOf}, {"anyOf", s.AnyOf}, {"oneOf", s.OneOf}} {
		for i, r := range alt.list {
			if err := resolveLocal(r, defs, fmt.Sprintf("%s.%s[%d]", path, alt.kw, i), depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

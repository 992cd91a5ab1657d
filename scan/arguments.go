package scan

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// freeText is the value of a required free-form string: plainly the scan's.
const freeText = "idemproof scan"

// builder builds arguments from a schema: the values the schema itself gives (an
// example, a default, a const, the first enum value), and for a required property with
// none of those a simple value of its type. What it will not guess — an id of something
// that must exist, a string with a pattern, a value of no declared type — it lists in
// needs, and the operation is not probed ("needs arguments for …"): a wild guess would
// only be refused, or act on something real.
type builder struct {
	needs []string
}

func (b *builder) need(path, why string) {
	b.needs = append(b.needs, path+" ("+why+")")
}

// object builds the required properties of an object schema, leaving out skip (the key
// argument, which every call fills with its own key).
func (b *builder) object(s *openapi3.Schema, path, skip string, depth int) map[string]any {
	out := map[string]any{}
	if s == nil {
		return out
	}
	required := append([]string(nil), s.Required...)
	sort.Strings(required)
	for _, name := range required {
		if name == skip {
			continue
		}
		p := s.Properties[name]
		if p == nil || p.Value == nil {
			b.need(join(path, name), "required, with no schema")
			continue
		}
		if v, ok := b.value(name, join(path, name), p.Value, depth+1); ok {
			out[name] = v
		}
	}
	return out
}

// given is the value a schema names itself, if any.
func given(s *openapi3.Schema) (any, bool) {
	switch {
	case s.Example != nil:
		return s.Example, true
	case len(s.Examples) > 0:
		return s.Examples[0], true
	case s.Default != nil:
		return s.Default, true
	case s.Const != nil:
		return s.Const, true
	}
	for _, e := range s.Enum {
		if e != nil {
			return e, true
		}
	}
	return nil, false
}

// value builds one value; false when it could not (and says what is needed).
func (b *builder) value(name, path string, s *openapi3.Schema, depth int) (any, bool) {
	if depth > maxSchemaDepth {
		b.need(path, "nested too deep")
		return nil, false
	}
	if v, ok := given(s); ok {
		return v, true
	}
	if len(s.AllOf) > 0 {
		out := map[string]any{}
		for _, part := range s.AllOf {
			if part == nil || part.Value == nil {
				continue
			}
			v, ok := b.value(name, path, part.Value, depth+1)
			if !ok {
				return nil, false
			}
			if m, isMap := v.(map[string]any); isMap {
				for k, x := range m {
					out[k] = x
				}
			}
		}
		return out, true
	}
	for _, alts := range []openapi3.SchemaRefs{s.OneOf, s.AnyOf} {
		for _, alt := range alts {
			if alt == nil || alt.Value == nil {
				continue
			}
			trial := &builder{}
			if v, ok := trial.value(name, path, alt.Value, depth+1); ok {
				return v, true
			}
		}
		if len(alts) > 0 {
			b.need(path, "none of its alternatives can be built")
			return nil, false
		}
	}
	switch t := firstType(s); t {
	case "boolean":
		return false, true
	case "integer":
		return integerIn(s), true
	case "number":
		return numberIn(s), true
	case "null":
		return nil, true
	case "array":
		if s.MinItems == 0 {
			return []any{}, true
		}
		if s.Items == nil || s.Items.Value == nil {
			b.need(path, fmt.Sprintf("at least %d items of no declared schema", s.MinItems))
			return nil, false
		}
		items := make([]any, 0, s.MinItems)
		for i := uint64(0); i < s.MinItems && i < 8; i++ {
			v, ok := b.value(name, fmt.Sprintf("%s[%d]", path, i), s.Items.Value, depth+1)
			if !ok {
				return nil, false
			}
			items = append(items, v)
		}
		return items, true
	case "object":
		before := len(b.needs)
		out := b.object(s, path, "", depth)
		return out, len(b.needs) == before
	case "string":
		return b.text(name, path, s)
	}
	b.need(path, "no type, example or default in its schema")
	return nil, false
}

// text is a required string's value: a sample of its format, else plain text — unless
// it names something that must exist (an id) or must match a pattern.
func (b *builder) text(name, path string, s *openapi3.Schema) (any, bool) {
	switch strings.ToLower(s.Format) {
	case "date":
		return "2026-01-01", true
	case "date-time":
		return "2026-01-01T00:00:00Z", true
	case "email":
		return "scan@example.com", true
	case "uuid":
		return "00000000-0000-4000-8000-000000000000", true
	case "uri", "url":
		return "https://example.com/", true
	}
	if s.Pattern != "" {
		b.need(path, "a string matching "+s.Pattern)
		return nil, false
	}
	if idLike(name) {
		b.need(path, "an id of something that must exist")
		return nil, false
	}
	v := freeText
	if s.MaxLength != nil && uint64(len(v)) > *s.MaxLength {
		v = v[:*s.MaxLength]
	}
	if uint64(len(v)) < s.MinLength {
		v += strings.Repeat("x", int(s.MinLength)-len(v))
	}
	return v, true
}

// idLike reports whether a property's name says it identifies something: id, uuid,
// order_id, orderId, customer-id.
func idLike(name string) bool {
	l := strings.ToLower(name)
	switch {
	case l == "id" || l == "uuid" || l == "guid":
		return true
	case strings.HasSuffix(l, "_id") || strings.HasSuffix(l, "-id") || strings.HasSuffix(l, "_uuid"):
		return true
	}
	return strings.HasSuffix(name, "Id") || strings.HasSuffix(name, "ID")
}

func firstType(s *openapi3.Schema) string {
	if s.Type != nil {
		for _, t := range *s.Type {
			if t != "null" {
				return t
			}
		}
		if len(*s.Type) > 0 {
			return "null"
		}
	}
	if len(s.Properties) > 0 {
		return "object"
	}
	return ""
}

// integerIn is the smallest positive integer the schema accepts (1, or above its
// minimum), within its maximum and a multiple of its multipleOf.
func integerIn(s *openapi3.Schema) int64 {
	v := 1.0
	if s.Min != nil {
		v = math.Max(v, math.Ceil(*s.Min))
		if s.ExclusiveMin.IsTrue() && v == *s.Min {
			v++
		}
	}
	if e := s.ExclusiveMin.Value; e != nil {
		v = math.Max(v, math.Floor(*e)+1)
	}
	if s.MultipleOf != nil && *s.MultipleOf >= 1 {
		v = math.Ceil(v / *s.MultipleOf) * *s.MultipleOf
	}
	if s.Max != nil && v > *s.Max {
		v = math.Floor(*s.Max)
	}
	return int64(v)
}

func numberIn(s *openapi3.Schema) float64 {
	v := 1.0
	if s.Min != nil && *s.Min >= v {
		v = *s.Min + 1
	}
	if s.Max != nil && v > *s.Max {
		v = *s.Max
	}
	return v
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// chooseChange picks the argument the changed-request probe changes: the first number
// (one more, or one less at its maximum), else a free-form string (with "-changed"), a
// boolean (flipped), or an enum's other value. Never the key argument, never a member
// holding {{.Entity}} (changing the entity makes another request by any fingerprint).
// nil: nothing can be changed.
func chooseChange(body map[string]any, s *openapi3.Schema, skip string) *Change {
	prop := func(name string) *openapi3.Schema {
		if s == nil || s.Properties[name] == nil {
			return nil
		}
		return s.Properties[name].Value
	}
	names := sortedNames(body)
	try := func(kind string) *Change {
		for _, name := range names {
			if name == skip || (kind == "string" && idLike(name)) {
				continue // changing an id changes what is acted on, not how
			}
			v, p := body[name], prop(name)
			changed, ok := changeValue(kind, v, p)
			if !ok {
				continue
			}
			alt := make(map[string]any, len(body))
			for k, x := range body {
				alt[k] = x
			}
			alt[name] = changed
			return &Change{Member: name, Body: marshalBody(alt), What: fmt.Sprintf("%s %s → %s", name, shortJSON(v), shortJSON(changed))}
		}
		return nil
	}
	for _, kind := range []string{"number", "string", "boolean", "enum"} {
		if c := try(kind); c != nil {
			return c
		}
	}
	return nil
}

func changeValue(kind string, v any, p *openapi3.Schema) (any, bool) {
	if p != nil && p.Const != nil {
		return nil, false
	}
	enum := p != nil && len(p.Enum) > 0
	switch x := v.(type) {
	case float64, int, int64:
		if kind != "number" || enum {
			return nil, false
		}
		f := toFloat(x)
		next := f + 1
		if p != nil && p.Max != nil && next > *p.Max {
			next = f - 1
		}
		if _, isFloat := x.(float64); isFloat && next != math.Trunc(next) {
			return next, true
		}
		return int64(next), true
	case string:
		switch {
		case kind == "string" && !enum && strings.Contains(x, "{{"):
			return nil, false
		case kind == "string" && !enum && (p == nil || (p.Format == "" && p.Pattern == "" && (p.MaxLength == nil || uint64(len(x))+8 <= *p.MaxLength))):
			return x + "-changed", true
		case kind == "enum" && enum:
			for _, e := range p.Enum {
				if s, ok := e.(string); ok && s != x {
					return s, true
				}
			}
		}
	case bool:
		if kind == "boolean" {
			return !x, true
		}
	}
	return nil, false
}

func toFloat(v any) float64 {
	switch n := v.(type) {
	case float64:
		return n
	case int:
		return float64(n)
	case int64:
		return float64(n)
	}
	return 0
}

// marshalBody writes compact JSON with sorted members, keeping {{.Entity}} readable.
func marshalBody(v any) string {
	b, _ := json.Marshal(v)
	return strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(string(b))
}

func shortJSON(v any) string {
	s := marshalBody(v)
	if len(s) > 40 {
		s = s[:39] + "…"
	}
	return s
}

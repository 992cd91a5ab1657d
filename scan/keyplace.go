package scan

import (
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// idempotencyWord is what marks a name or a description as about an idempotency key.
var idempotencyWord = regexp.MustCompile(`(?i)idempoten`)

// metaInDescription finds "_meta.NAME" in a tool's description ("Send an idempotency
// key in _meta.idempotency_key"): the _meta member the tool reads its key from.
var metaInDescription = regexp.MustCompile(`_meta\.([A-Za-z0-9_\-/]+(?:\.[A-Za-z0-9_\-/]+)*)`)

// headerInDescription finds an Idempotency-Key-like header named in a description.
var headerInDescription = regexp.MustCompile(`(?i)\b((?:x-)?idempotency-key)\b`)

// toolKey finds where a tool takes its key, in this order: an argument whose name says
// idempotency, then one whose description does; a member of the tool's own _meta whose
// name says idempotency; a _meta member its description names beside the word; an
// Idempotency-Key header its description names; params.idempotencyKey when the server
// advertises tools.idempotency (SEP-3182). nil: the tool takes no key.
func toolKey(description string, input *openapi3.Schema, meta map[string]any, capability bool) *Key {
	if k := propertyKey(input, "its name", "its description: "); k != nil {
		return k
	}
	for _, name := range sortedNames(meta) {
		if idempotencyWord.MatchString(name) {
			return &Key{Place: PlaceMeta, Name: name, Why: "the tool's _meta declares it"}
		}
	}
	if idempotencyWord.MatchString(description) {
		if m := metaInDescription.FindStringSubmatch(description); m != nil {
			return &Key{Place: PlaceMeta, Name: strings.TrimRight(m[1], ".-/"), Why: "the tool's description: " + quoteShort(description)}
		}
		if m := headerInDescription.FindStringSubmatch(description); m != nil {
			return &Key{Place: PlaceHeader, Name: canonicalKeyHeader(m[1]), Why: "the tool's description: " + quoteShort(description)}
		}
	}
	if capability {
		return &Key{Place: PlaceParams, Name: "idempotencyKey", Why: "the server advertises tools.idempotency (SEP-3182)"}
	}
	return nil
}

// operationKey finds where an HTTP operation takes its key: a header parameter whose
// name, then one whose description, says idempotency; a JSON body property whose name,
// then one whose description, does. nil: the operation takes none.
func operationKey(params []*openapi3.Parameter, body *openapi3.Schema) *Key {
	for _, byDescription := range []bool{false, true} {
		for _, p := range params {
			if p.In != openapi3.ParameterInHeader {
				continue
			}
			text, why := p.Name, "a header parameter of the document"
			if byDescription {
				text, why = p.Description, "a header parameter of the document, by its description: "+quoteShort(p.Description)
			}
			if idempotencyWord.MatchString(text) {
				return &Key{Place: PlaceHeader, Name: p.Name, Why: why, UUID: isUUID(p.Schema)}
			}
		}
	}
	return propertyKey(body, "a body property named for it", "a body property, by its description: ")
}

// propertyKey is the property of an object schema (a tool's arguments, an HTTP body)
// whose name says idempotency, else the one whose description does; nil for none.
// byName and byDescription say why, in the Key.
func propertyKey(s *openapi3.Schema, byName, byDescription string) *Key {
	if s == nil {
		return nil
	}
	names := sortedNames(s.Properties)
	for _, name := range names {
		if idempotencyWord.MatchString(name) {
			return &Key{Place: PlaceArgument, Name: name, Why: byName, UUID: isUUID(s.Properties[name])}
		}
	}
	for _, name := range names {
		p := s.Properties[name]
		if p != nil && p.Value != nil && idempotencyWord.MatchString(p.Value.Description) {
			return &Key{Place: PlaceArgument, Name: name, Why: byDescription + quoteShort(p.Value.Description), UUID: isUUID(p)}
		}
	}
	return nil
}

func isUUID(s *openapi3.SchemaRef) bool {
	return s != nil && s.Value != nil && strings.EqualFold(s.Value.Format, "uuid")
}

// canonicalKeyHeader spells a header found in prose the way the drafts do.
func canonicalKeyHeader(s string) string {
	if strings.HasPrefix(strings.ToLower(s), "x-") {
		return "X-Idempotency-Key"
	}
	return "Idempotency-Key"
}

// quoteShort quotes a description for evidence, cut after 80 characters.
func quoteShort(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 80 {
		s = string(r[:79]) + "…"
	}
	return `"` + s + `"`
}

// sortedNames are a map's keys in order.
func sortedNames[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

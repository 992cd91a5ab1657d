package scan

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// source is what enumeration keeps of an operation's schema for building its arguments
// (and for checking an --args entry against it).
type source struct {
	// input is a tool's inputSchema, or the schema of an HTTP operation's JSON body.
	input *openapi3.Schema
	// params are an HTTP operation's parameters.
	params []*openapi3.Parameter
	// media is an HTTP request body's media type ("" for none).
	media string
	// bodyExample is the body the document's own example gives.
	bodyExample map[string]any
}

// inputs lists an object schema's properties (in is "argument" or "body"), then the
// parameters.
func inputs(s *openapi3.Schema, in string, params []*openapi3.Parameter) []Input {
	var out []Input
	if s != nil {
		required := map[string]bool{}
		for _, r := range s.Required {
			required[r] = true
		}
		for _, name := range sortedNames(s.Properties) {
			typ := ""
			if p := s.Properties[name]; p != nil && p.Value != nil {
				typ = firstType(p.Value)
			}
			out = append(out, Input{Name: name, In: in, Type: typ, Required: required[name]})
		}
	}
	for _, p := range params {
		typ := ""
		if p.Schema != nil && p.Schema.Value != nil {
			typ = firstType(p.Schema.Value)
		}
		out = append(out, Input{Name: p.Name, In: p.In, Type: typ, Required: p.Required})
	}
	return out
}

// keyArgument is the argument or body member the key travels in ("" when it travels
// elsewhere): it is never built, changed or checked as an argument.
func keyArgument(k *Key) string {
	if k != nil && k.Place == PlaceArgument {
		return k.Name
	}
	return ""
}

// needsText is the Problem of an operation whose arguments could not be built.
func needsText(needs []string) string {
	return "needs arguments for " + strings.Join(needs, ", ") + ": give them in --args"
}

// schemaRequest builds a tool's arguments from its input schema: every required
// argument (builder), and the optional ones that carry an example.
func schemaRequest(op *Operation, input *openapi3.Schema) (*Request, string) {
	b := &builder{}
	skip := keyArgument(op.Key)
	args := b.object(input, "", skip, 0)
	if len(b.needs) > 0 {
		return nil, needsText(b.needs)
	}
	withExamples(args, input, skip)
	return &Request{Body: marshalBody(args), Change: chooseChange(args, input, skip), From: "the schema"}, ""
}

// withExamples adds the optional properties whose schema gives an example.
func withExamples(obj map[string]any, s *openapi3.Schema, skip string) {
	if s == nil {
		return
	}
	for name, p := range s.Properties {
		if _, set := obj[name]; set || name == skip || p == nil || p.Value == nil || p.Value.ReadOnly {
			continue
		}
		switch {
		case p.Value.Example != nil:
			obj[name] = p.Value.Example
		case len(p.Value.Examples) > 0:
			obj[name] = p.Value.Examples[0]
		}
	}
}

var pathParam = regexp.MustCompile(`\{([^}]+)\}`)

// httpRequest builds an HTTP operation's call: its path parameters and required query
// and header parameters from their examples (or simple values), and its JSON body from
// the document's example, else the schema.
func httpRequest(op *Operation) (*Request, string) { return httpRequestWith(op, nil) }

// httpRequestWith is httpRequest with an --args entry's values over the built ones: its
// path and query parameters, its headers, its arguments as the whole body.
func httpRequestWith(op *Operation, e *ArgsEntry) (*Request, string) {
	if e == nil {
		e = &ArgsEntry{}
	}
	src := op.src
	b := &builder{}
	req := &Request{From: "the document", Header: map[string]string{}}
	values := map[string]string{}
	query := map[string]string{}
	for _, p := range src.params {
		if p.In == openapi3.ParameterInHeader && op.Key != nil && op.Key.Place == PlaceHeader && strings.EqualFold(p.Name, op.Key.Name) {
			continue
		}
		if v, ok := e.Path[p.Name]; ok && p.In == openapi3.ParameterInPath {
			values[p.Name] = v
			continue
		}
		if !p.Required && p.In != openapi3.ParameterInPath {
			continue
		}
		v, ok := paramValue(b, p)
		if !ok {
			continue
		}
		switch p.In {
		case openapi3.ParameterInPath:
			values[p.Name] = url.PathEscape(v)
		case openapi3.ParameterInQuery:
			query[p.Name] = url.QueryEscape(v)
		case openapi3.ParameterInHeader:
			req.Header[p.Name] = v
		case openapi3.ParameterInCookie:
			b.need("cookie "+p.Name, "a cookie parameter; give it as a Cookie header in --args")
		}
	}
	for name, v := range e.Query {
		query[name] = v // a template: {{.Entity}} is filled per probe, as the path's
	}
	for name, v := range e.Headers {
		req.Header[name] = v
	}
	req.Path = pathParam.ReplaceAllStringFunc(op.Path, func(m string) string {
		name := m[1 : len(m)-1]
		v, ok := values[name]
		if !ok {
			b.need("path "+name, "a path parameter the document does not declare")
			return m
		}
		return v
	})
	if len(query) > 0 {
		var parts []string
		for _, name := range sortedNames(query) {
			parts = append(parts, url.QueryEscape(name)+"="+query[name])
		}
		req.Path += "?" + strings.Join(parts, "&")
	}
	switch {
	case e.Arguments != nil:
		req.From = "--args"
		req.Body = marshalBody(e.Arguments)
		req.Change = chooseChange(e.Arguments, src.input, keyArgument(op.Key))
		req.Header["Content-Type"] = "application/json"
	case src.media != "" && src.input == nil:
		b.need("body", "a "+src.media+" body; scan sends JSON bodies only")
	case src.input != nil:
		skip := keyArgument(op.Key)
		body := cloneObject(src.bodyExample)
		if body == nil {
			if m, ok := given(src.input); ok {
				body = cloneObject(m)
			}
		}
		if body == nil {
			body = b.object(src.input, "body", skip, 0)
			withExamples(body, src.input, skip)
		} else {
			req.From = "the document's example"
			delete(body, skip)
		}
		req.Body = marshalBody(body)
		req.Change = chooseChange(body, src.input, skip)
		req.Header["Content-Type"] = "application/json"
	}
	if len(b.needs) > 0 {
		return nil, needsText(b.needs)
	}
	if len(req.Header) == 0 {
		req.Header = nil
	}
	return req, ""
}

// cloneObject is a shallow copy of a JSON object, nil for anything else.
func cloneObject(v any) map[string]any {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, x := range m {
		out[k] = x
	}
	return out
}

// jsonObject decodes a body template (its {{.Entity}} as it is) into an object.
func jsonObject(body string, out *map[string]any) error {
	if body == "" {
		return errors.New("no body")
	}
	return json.Unmarshal([]byte(body), out)
}

// paramValue is a parameter's value: its own example, else its schema's value.
func paramValue(b *builder, p *openapi3.Parameter) (string, bool) {
	var v any
	switch {
	case p.Example != nil:
		v = p.Example
	case len(p.Examples) > 0:
		for _, name := range sortedNames(p.Examples) {
			if ex := p.Examples[name]; ex != nil && ex.Value != nil && ex.Value.Value != nil {
				v = ex.Value.Value
				break
			}
		}
	}
	if v == nil {
		if p.Schema == nil || p.Schema.Value == nil {
			b.need(p.In+" "+p.Name, "a parameter with no schema")
			return "", false
		}
		var ok bool
		if v, ok = b.value(p.Name, p.In+" "+p.Name, p.Schema.Value, 0); !ok {
			return "", false
		}
	}
	if s, ok := v.(string); ok {
		return s, true
	}
	return strings.Trim(marshalBody(v), `"`), true
}

// paramNames lists an HTTP operation's parameters of one place, for --args messages.
func paramNames(src *source, in string) []string {
	var out []string
	for _, p := range src.params {
		if p.In == in {
			out = append(out, p.Name)
		}
	}
	sort.Strings(out)
	return out
}

// describeNames is "a, b and c", or "none".
func describeNames(names []string) string {
	switch len(names) {
	case 0:
		return "none"
	case 1:
		return names[0]
	}
	return fmt.Sprintf("%s and %s", strings.Join(names[:len(names)-1], ", "), names[len(names)-1])
}

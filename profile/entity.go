package profile

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/tidwall/gjson"
)

// EntityRef says where a request names the logical operation it belongs to: a JSON path
// into the request body (gjson syntax, e.g. order_id or params.arguments.order_id), a
// field of a form-encoded body (metadata[order_id]), a request header, or the path
// segment where {{.Entity}} stands in a path template (/v1/charges/{{.Entity}}/refunds).
// Exactly one is set.
type EntityRef struct {
	JSON   string `yaml:"json,omitempty" json:"json,omitempty"`
	Form   string `yaml:"form,omitempty" json:"form,omitempty"`
	Header string `yaml:"header,omitempty" json:"header,omitempty"`
	Path   string `yaml:"path,omitempty" json:"path,omitempty"`
}

// String is "json:order_id", "form:metadata[order_id]", "header:X-Order-Id" or
// "path:/v1/charges/{{.Entity}}/refunds".
func (e EntityRef) String() string {
	switch {
	case e.Header != "":
		return "header:" + e.Header
	case e.Form != "":
		return "form:" + e.Form
	case e.Path != "":
		return "path:" + e.Path
	}
	return "json:" + e.JSON
}

// FormValue is the value of a form-encoded body's field name ("" when the body is no
// form or has no such field).
func FormValue(body, name string) string {
	fields, ok := FormFields(body)
	if !ok {
		return ""
	}
	for _, f := range fields {
		if n, _ := url.QueryUnescape(f.Name); n == name {
			v, _ := url.QueryUnescape(f.Value)
			return v
		}
	}
	return ""
}

// FormFieldNames are the field names of a form-encoded body, decoded, each once, in
// order (nil when the body is not a form, by the rule FormValue reads it with).
func FormFieldNames(body string) []string {
	fields, ok := FormFields(body)
	if !ok {
		return nil
	}
	seen := map[string]bool{}
	var names []string
	for _, f := range fields {
		if n, _ := url.QueryUnescape(f.Name); !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	return names
}

// PathEntity is what a request path holds where {{.Entity}} stands in the template
// (its query ignored), and whether the rest of the path matches the template.
func PathEntity(template, path string) (string, bool) {
	template, _, _ = strings.Cut(template, "?")
	ts, ps := strings.Split(template, "/"), strings.Split(path, "/")
	if len(ts) != len(ps) {
		return "", false
	}
	entity := ""
	for i, t := range ts {
		before, after, found := strings.Cut(t, "{{.Entity}}")
		switch {
		case !found && t != ps[i]:
			return "", false
		case !found:
		case len(ps[i]) <= len(before)+len(after) || !strings.HasPrefix(ps[i], before) || !strings.HasSuffix(ps[i], after):
			return "", false
		default:
			v, err := url.PathUnescape(ps[i][len(before) : len(ps[i])-len(after)])
			if err != nil {
				return "", false
			}
			entity = v
		}
	}
	return entity, entity != ""
}

// checkEntity validates entity: one place, a usable path, field or header name, and a
// JSON path or form field that finds {{.Entity}} in the operation's own body (so a typo,
// or a JSON path on a form body, is caught at load).
func checkEntity(e *EntityRef, op Operation) []fieldError {
	if e == nil {
		return nil
	}
	var errs []fieldError
	add := func(path, format string, args ...any) {
		errs = append(errs, fieldError{Path: path, Msg: fmt.Sprintf(format, args...)})
	}
	set := 0
	for _, v := range []string{e.JSON, e.Form, e.Header, e.Path} {
		if v != "" {
			set++
		}
	}
	const sample = "ip-sample-1"
	body, bodyErr := Render(op.Body, sample)
	switch {
	case set > 1:
		add("entity", "set one of json, form, header or path (the operation is named in one place)")
	case set == 0:
		add("entity", "set json (a JSON path into the request body, e.g. order_id), form (a field of a form-encoded body, e.g. metadata[order_id]), header (e.g. X-Order-Id) or path (the path with {{.Entity}} where the operation's id stands, e.g. /v1/charges/{{.Entity}}/refunds)")
	case e.Header != "" && strings.ContainsAny(e.Header, " :\t\r\n"):
		add("entity.header", "must be a header name such as X-Order-Id, got %q", e.Header)
	case e.JSON != "" && strings.ContainsAny(e.JSON, " \t\r\n"):
		add("entity.json", "must be a JSON path such as order_id or params.arguments.order_id, got %q", e.JSON)
	case e.Path != "" && (!strings.HasPrefix(e.Path, "/") || strings.Count(e.Path, "{{.Entity}}") != 1):
		add("entity.path", "must be a path with {{.Entity}} once where the operation's id stands, e.g. /v1/charges/{{.Entity}}/refunds, got %q", e.Path)
	case e.Form != "" && strings.ContainsAny(e.Form, "&= \t\r\n"):
		add("entity.form", "must be a form field name such as order_id or metadata[order_id], got %q", e.Form)
	case e.JSON != "" && op.Body != "" && bodyErr == nil && !gjson.Valid(body):
		if _, isForm := FormFields(body); isForm {
			add("entity.json", "operation.body is form-encoded, not JSON, so a JSON path finds nothing in it: use entity: {form: <field>}")
		}
	case e.JSON != "" && op.Body != "" && bodyErr == nil && gjson.Get(body, e.JSON).String() != sample:
		add("entity.json", "%q does not find {{.Entity}} in operation.body: point it at the field that names the operation", e.JSON)
	case e.Form != "" && op.Body != "" && bodyErr == nil && FormValue(body, e.Form) != sample:
		add("entity.form", "%q does not find {{.Entity}} in operation.body (a form-encoded body such as amount=4900&metadata[order_id]={{.Entity}}): point it at the field that names the operation", e.Form)
	}
	return errs
}

// EntityInRequest reports whether the operation's request names the entity at all.
func (p *Profile) EntityInRequest() bool {
	if p.EntityInPath() {
		return true
	}
	body, sample, err := RenderSample(p.Operation.Body)
	return err == nil && strings.Contains(body, sample)
}

// EntityInPath reports whether operation.path names the entity: then a request for
// another entity is another endpoint, where a key may be scoped on its own.
func (p *Profile) EntityInPath() bool {
	path, err := Render(p.Operation.Path, SampleEntity)
	return err == nil && strings.Contains(path, SampleEntity)
}

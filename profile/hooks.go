package profile

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/idemproof/idemproof/internal/jsonvalue"
)

// HookData is what {{...}} in a test hook's value, query values and path can see.
type HookData struct {
	Entity string
	HoldMs int64  // the hold in milliseconds: slow_operation's, or 2 × lock_timeout past the lock
	Value  string // the hook's value: fail_operation's status, the crash point's value
}

// HookForm is the shape shared by every hook: one of header, query, path or field.
type HookForm struct {
	Header string
	Query  map[string]string
	Path   string
	// Field is a dotted path into the request's JSON body (key_field's syntax; over MCP
	// into the JSON-RPC request), where the hook's value goes as a JSON string, or, with
	// ValueJSON, as the JSON value it spells.
	Field     string
	ValueJSON bool
}

func (h *TestHook) Form() HookForm {
	return HookForm{Header: h.Header, Query: h.Query, Path: h.Path, Field: h.Field, ValueJSON: h.ValueJSON}
}

func (c *CrashHook) Form() HookForm {
	return HookForm{Header: c.Header, Query: c.Query, Path: c.Path, Field: c.Field, ValueJSON: c.ValueJSON}
}

// FieldValue is the JSON value a field-form hook puts at its field: the rendered value
// as a JSON string, or, with value_json, as the JSON value it spells.
func (f HookForm) FieldValue(rendered string) (*jsonvalue.Value, error) {
	if !f.ValueJSON {
		return jsonvalue.NewString(rendered), nil
	}
	v, err := jsonvalue.Parse(rendered)
	if err != nil {
		return nil, fmt.Errorf("value_json: %q is not a JSON value: %w", rendered, err)
	}
	return v, nil
}

// HoldDuration is how long the slow hook holds the work: hold, else value read as a duration.
func (h *TestHook) HoldDuration() time.Duration {
	if h.Hold > 0 {
		return h.Hold.Std()
	}
	d, _ := parseDuration(h.Value)
	return d.Std()
}

func RenderHook(s string, d HookData) (string, error) { return execTemplate(s, d) }

// checkHookForm validates one hook's shape: exactly one of header, query, path and
// field, each a template that renders with sample data. valueRequired: the header and
// field forms need value. Where a field may go in the request is checkHookFields'.
func checkHookForm(path string, f HookForm, value string, valueRequired bool) []fieldError {
	var errs []fieldError
	add := func(p, format string, args ...any) {
		errs = append(errs, fieldError{Path: p, Msg: fmt.Sprintf(format, args...)})
	}
	forms := 0
	for _, set := range []bool{f.Header != "", len(f.Query) > 0, f.Path != "", f.Field != ""} {
		if set {
			forms++
		}
	}
	switch {
	case forms == 0:
		add(path, "set how a request switches the hook on: header (with value), query (e.g. {ms: \"{{.HoldMs}}\"}), path (e.g. /slow?ms={{.HoldMs}}) or field (with value: a JSON path into the request's body, e.g. params._meta.test_delay)")
	case forms > 1:
		add(path, "set one of header, query, path and field, not several")
	}
	sample := HookData{Entity: "ip-sample-1", HoldMs: 400, Value: "sample"}
	check := func(p, s string) {
		if _, err := RenderHook(s, sample); err != nil {
			add(p, "template: %s (available: {{.HoldMs}}, {{.Value}}, {{.Entity}})", strings.TrimPrefix(err.Error(), "template: "))
		}
	}
	if f.Header != "" {
		if strings.ContainsAny(f.Header, " :\t\r\n") {
			add(path+".header", "must be a header name such as X-Test-Delay, got %q", f.Header)
		}
		if valueRequired && value == "" {
			add(path+".value", "required with header: the header's value")
		}
	}
	if f.Field != "" {
		if !validFieldPath(f.Field) || strings.ContainsAny(f.Field, " \t\r\n") {
			add(path+".field", "must be a dotted JSON path into the request's body, such as params._meta.test_delay, got %q", f.Field)
		}
		if valueRequired && value == "" {
			add(path+".value", "required with field: the value the field is set to")
		}
	}
	if value != "" {
		check(path+".value", value)
	}
	if f.ValueJSON {
		switch {
		case f.Field == "":
			add(path+".value_json", "goes with field: only a body field carries a JSON value")
		case value != "":
			if out, err := RenderHook(value, sample); err == nil {
				if _, err := jsonvalue.Parse(out); err != nil {
					add(path+".value", "with value_json, must render to a JSON value such as 400, true or {\"ms\": 400}; %q (rendered with sample data) is not one", out)
				}
			}
		}
	}
	for _, k := range sortedNames(f.Query) {
		if k == "" {
			add(path+".query", "a query parameter needs a name")
			continue
		}
		check(path+".query."+k, f.Query[k])
	}
	if f.Path != "" {
		if !strings.HasPrefix(f.Path, "/") {
			add(path+".path", "must start with /, e.g. /slow?ms={{.HoldMs}}, got %q", f.Path)
		} else {
			check(path+".path", f.Path)
		}
	}
	return errs
}

// checkSlowHook adds what only slow_operation needs: a hold it can be measured by.
func checkSlowHook(h *TestHook) []fieldError {
	errs := checkHookForm("slow_operation", h.Form(), h.Value, true)
	if h.Hold > 0 {
		return errs
	}
	if _, err := parseDuration(h.Value); err != nil {
		msg := "must be a duration the target holds the work for, e.g. 400ms"
		if h.Value == "" || strings.Contains(h.Value, "{{") {
			errs = append(errs, fieldError{Path: "slow_operation.hold", Msg: "required unless value is a duration: how long the target holds the work, e.g. 400ms"})
		} else {
			errs = append(errs, fieldError{Path: "slow_operation.value", Msg: fmt.Sprintf("%s: %v (or set hold)", msg, err)})
		}
	}
	return errs
}

func sortedNames(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// FailStatus is the 5xx fail_operation asks the target to fail with, when its value is
// one (a hook whose value is not a status, e.g. ?fail=true, declares none).
func (p *Profile) FailStatus() (int, bool) {
	if p.FailHook == nil {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(p.FailHook.Value))
	return n, err == nil && n >= 500 && n <= 599
}

// hookFields are the profile's hooks declared in the field form, by the profile field
// that declares them.
func (p *Profile) hookFields() []struct{ name, field string } {
	var out []struct{ name, field string }
	for _, h := range []struct {
		name string
		form HookForm
	}{{"slow_operation", p.Slow.formOrZero()}, {"fail_operation", p.FailHook.formOrZero()}, {"crash", p.Crash.formOrZero()}} {
		if h.form.Field != "" {
			out = append(out, struct{ name, field string }{h.name, h.form.Field})
		}
	}
	return out
}

// checkHookFields validates where the field form's hooks go: not where the key goes
// (the key would be overwritten, or put inside a hook), not in the JSON-RPC envelope
// over MCP (the transport writes the id, the method and the version), and, over plain
// HTTP, only into an operation.body that is a JSON object.
func checkHookFields(p *Profile) []fieldError {
	var errs []fieldError
	for _, h := range p.hookFields() {
		path := h.name + ".field"
		if !validFieldPath(h.field) {
			continue // checkHookForm said so
		}
		parts := jsonvalue.SplitPath(h.field)
		switch {
		case p.KeyField != "" && fieldsOverlap(h.field, p.KeyField):
			errs = append(errs, fieldError{Path: path, Msg: fmt.Sprintf("%q collides with key_field %s: the hook and the key need places of their own in the request", h.field, p.KeyField)})
		case p.IsMCP() && jsonvalue.JSONRPCEnvelope[parts[0]]:
			errs = append(errs, fieldError{Path: path, Msg: fmt.Sprintf("%q is the JSON-RPC request's own member, which the transport writes: a hook goes under params, e.g. params._meta.test_delay", h.field)})
		case !p.IsMCP() && !jsonObjectBody(p.Operation.Body):
			errs = append(errs, fieldError{Path: path, Msg: "needs a JSON object in operation.body to carry the hook; with another body use the header, query or path form"})
		}
	}
	return errs
}

// fieldsOverlap reports whether two dotted paths name the same member, or one is inside
// the other.
func fieldsOverlap(a, b string) bool {
	pa, pb := jsonvalue.SplitPath(a), jsonvalue.SplitPath(b)
	n := min(len(pa), len(pb))
	return slices.Equal(pa[:n], pb[:n])
}

// jsonObjectBody reports whether a body template renders to a JSON object.
func jsonObjectBody(body string) bool {
	out, err := Render(body, "ip-sample-1")
	if err != nil {
		return true // checkTemplate reports the template
	}
	v, err := jsonvalue.Parse(out)
	return err == nil && v.IsObject
}

func (c *CrashHook) formOrZero() HookForm {
	if c == nil {
		return HookForm{}
	}
	return c.Form()
}

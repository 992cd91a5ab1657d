package scenarios

import (
	"fmt"
	"strings"

	"github.com/tidwall/gjson"
)

// EntityRef says where a request names the logical operation it belongs to: a JSON path
// into the request body (gjson syntax, e.g. order_id or params.arguments.order_id), or a
// request header. Exactly one is set.
type EntityRef struct {
	JSON   string `yaml:"json,omitempty" json:"json,omitempty"`
	Header string `yaml:"header,omitempty" json:"header,omitempty"`
}

// String is "json:order_id" or "header:X-Order-Id".
func (e EntityRef) String() string {
	if e.Header != "" {
		return "header:" + e.Header
	}
	return "json:" + e.JSON
}

// checkEntity validates entity: one place, a usable path or header name, and a JSON
// path that finds {{.Entity}} in the operation's own body (so a typo is caught at load).
func checkEntity(e *EntityRef, op Operation) []fieldError {
	if e == nil {
		return nil
	}
	var errs []fieldError
	add := func(path, format string, args ...any) {
		errs = append(errs, fieldError{Path: path, Msg: fmt.Sprintf(format, args...)})
	}
	switch {
	case e.JSON != "" && e.Header != "":
		add("entity", "set json or header, not both (the operation is named in one place)")
	case e.JSON == "" && e.Header == "":
		add("entity", "set json (a JSON path into the request body, e.g. order_id) or header (e.g. X-Order-Id)")
	case e.Header != "" && strings.ContainsAny(e.Header, " :\t\r\n"):
		add("entity.header", "must be a header name such as X-Order-Id, got %q", e.Header)
	case e.JSON != "" && strings.ContainsAny(e.JSON, " \t\r\n"):
		add("entity.json", "must be a JSON path such as order_id or params.arguments.order_id, got %q", e.JSON)
	case e.JSON != "" && op.Body != "":
		body, err := render(op.Body, "ip-sample-1")
		if err == nil && gjson.Valid(body) && gjson.Get(body, e.JSON).String() != "ip-sample-1" {
			add("entity.json", "%q does not find {{.Entity}} in operation.body: point it at the field that names the operation", e.JSON)
		}
	}
	return errs
}

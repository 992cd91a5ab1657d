package profile

import (
	"fmt"
	"net/http"
	"strings"
)

// EntitySetup creates the entity a scenario acts on — the order a refund belongs to, the
// charge it refunds — with one request before the scenario's first attempt, for APIs
// whose operation needs a parent that already exists. {{.Entity}} in the operation, the
// ledger and the hooks is then the id its answer names. The request's own templates see
// {{.Entity}} as the runner's fresh name for it (a label, e.g. for a description).
type EntitySetup struct {
	Method  string            `yaml:"method,omitempty" json:"method,omitempty"` // default POST
	Path    string            `yaml:"path" json:"path"`
	Headers map[string]string `yaml:"headers,omitempty" json:"headers,omitempty"`
	Body    string            `yaml:"body,omitempty" json:"body,omitempty"`
	// ID is a gjson path into the answer's body to the created entity's id (id, data.id).
	ID string `yaml:"id" json:"id"`
}

// checkEntitySetup validates entity_setup.
func checkEntitySetup(p *Profile) []fieldError {
	s := p.EntitySetup
	if s == nil {
		return nil
	}
	var errs []fieldError
	add := func(path, format string, args ...any) {
		errs = append(errs, fieldError{Path: "entity_setup" + path, Msg: fmt.Sprintf(format, args...)})
	}
	if p.Transport == TransportMCP {
		add("", "is an HTTP request, and this profile speaks MCP: create the entities another way (a tool the operation's arguments name), or leave entity_setup out")
	}
	if !strings.HasPrefix(s.Path, "/") {
		add(".path", "must be a path on base_url starting with /, such as /v1/charges, got %q", s.Path)
	}
	if s.ID == "" || !validFieldPath(s.ID) || strings.ContainsAny(s.ID, " \t\r\n") {
		add(".id", "must be a JSON path into the answer to the created entity's id, such as id or data.id, got %q", s.ID)
	}
	switch strings.ToUpper(s.Method) {
	case "", http.MethodPost, http.MethodPut, http.MethodPatch:
	default:
		add(".method", "must be POST (the default), PUT or PATCH: a request that creates the entity, got %q", s.Method)
	}
	for _, t := range []struct{ field, tmpl string }{{".path", s.Path}, {".body", s.Body}} {
		if _, err := Render(t.tmpl, SampleEntity); err != nil {
			add(t.field, "is not a valid template: %v", err)
		}
	}
	return errs
}

package scenarios

import (
	"bytes"
	"encoding/json"
	"strings"
	"text/template"
)

// templateData is what {{...}} in a profile's paths and bodies can see.
type templateData struct {
	Entity string // fresh per scenario run, e.g. "ip-3f9a2c-17"
}

// render fills a template; the profile was validated, so errors here mean a template
// that only fails on some entity, which is reported as the scenario's error.
func render(s, entity string) (string, error) {
	if !strings.Contains(s, "{{") {
		return s, nil
	}
	t, err := template.New("").Option("missingkey=error").Parse(s)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := t.Execute(&b, templateData{Entity: entity}); err != nil {
		return "", err
	}
	return b.String(), nil
}

// checkTemplate parses and executes s with a sample entity at load time, so a typo such
// as {{.Entitty}} is reported with its line instead of failing every scenario later.
func checkTemplate(s string, mustBeJSON bool) string {
	out, err := render(s, "ip-sample-1")
	if err != nil {
		return "template: " + strings.TrimPrefix(err.Error(), "template: ") + " (only {{.Entity}} is available)"
	}
	if mustBeJSON && !json.Valid([]byte(out)) {
		return "must be a JSON object when key_field carries the key in the body"
	}
	return ""
}

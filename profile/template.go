package profile

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"text/template"
)

// templateData is what {{...}} in a profile's paths and bodies can see.
type templateData struct {
	Entity string // fresh per scenario run, e.g. "ip-3f9a2c-17"
	// Nonce is fresh on every request the harness builds, in header values only
	// (operation.headers, principals): what a client sends anew on every attempt, the
	// retries' too (a request id, a signature, an SDK's date).
	Nonce string
}

// Render fills a profile template (a path, a body) with the entity, as the catalogue's
// runner and client-check do; the profile was validated, so an error here means a
// template that only fails on some entity, which is reported as the scenario's error.
func Render(s, entity string) (string, error) {
	return execTemplate(s, templateData{Entity: entity})
}

// execTemplate fills template s with data; s without {{ is itself. Every profile
// template is filled here, so an unknown name is an error everywhere (missingkey=error).
func execTemplate(s string, data any) (string, error) {
	if !strings.Contains(s, "{{") {
		return s, nil
	}
	t, err := template.New("").Option("missingkey=error").Parse(s)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		return "", err
	}
	return b.String(), nil
}

// checkTemplate parses and executes s with a sample entity at load time, so a typo such
// as {{.Entitty}} is reported with its line instead of failing every scenario later.
func checkTemplate(s string, mustBeJSON bool) string {
	out, err := Render(s, "ip-sample-1")
	if err != nil {
		return "template: " + strings.TrimPrefix(err.Error(), "template: ") + " (only {{.Entity}} is available)"
	}
	if mustBeJSON && !json.Valid([]byte(out)) {
		return "must be a JSON object when key_field carries the key in the body"
	}
	return ""
}

// RequestHeaders are the headers a request carries before its own: the call's (opHeaders:
// operation.headers, or other_operation's), then principal's (when the profile has it),
// their values rendered with the entity and a fresh {{.Nonce}}.
func (p *Profile) RequestHeaders(opHeaders map[string]string, principal int, entity string) (http.Header, error) {
	h := http.Header{}
	// One nonce for the request, drawn only when a header value is a template: most
	// profiles have none, and a burst builds a thousand requests.
	data := templateData{Entity: entity}
	set := func(from map[string]string, what string) error {
		for k, v := range from {
			if data.Nonce == "" && strings.Contains(v, "{{") {
				data.Nonce = headerNonce()
			}
			out, err := renderHeader(v, data)
			if err != nil {
				return fmt.Errorf("render %s %s: %w", what, k, err)
			}
			h.Set(k, out)
		}
		return nil
	}
	if err := set(opHeaders, "header"); err != nil {
		return nil, err
	}
	if len(p.Principals) > principal {
		if err := set(p.Principals[principal], "principals header"); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// renderHeader fills a header value's template.
func renderHeader(v string, data templateData) (string, error) { return execTemplate(v, data) }

// checkHeaderTemplate is checkTemplate for a header value: {{.Entity}} and {{.Nonce}},
// and a value that renders to a valid header field value.
func checkHeaderTemplate(v string) string {
	out, err := renderHeader(v, templateData{Entity: "ip-sample-1", Nonce: headerNonce()})
	if err != nil {
		return "template: " + strings.TrimPrefix(err.Error(), "template: ") + " (available in header values: {{.Entity}}, {{.Nonce}})"
	}
	if strings.ContainsAny(out, "\r\n\x00") {
		return fmt.Sprintf("renders to %q, which is no valid header value", out)
	}
	return ""
}

// headerNonce is {{.Nonce}}: 16 random hex digits.
func headerNonce() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

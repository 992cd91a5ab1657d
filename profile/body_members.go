package profile

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/idemproof/idemproof/internal/jsonvalue"
)

// MaxChangedMembers bounds how many members fingerprint/each-member changes (one step
// each, one request the target must refuse): enough for the payloads of payment and
// tool-call APIs, where the amount, the account and the currency live, while a slow
// target still gets through the steps within a scenario's time. Members past it are
// named in the verdict as not changed, never passed over in silence.
const MaxChangedMembers = 16

// SampleEntity renders templates where only the shape of the result matters.
const SampleEntity = "ip-sample-1"

// sampleNumericEntity renders a body that writes {{.Entity}} unquoted, as a JSON number
// ({"charge": {{.Entity}}}, for an API whose ids are integers): with sampleEntity it is
// no JSON, with this it is.
const sampleNumericEntity = "987654321"

// RenderSample renders a template for its shape: with sampleEntity, or with
// sampleNumericEntity when only that gives JSON. It returns the sample it used.
func RenderSample(tmpl string) (string, string, error) {
	out, err := Render(tmpl, SampleEntity)
	if err != nil || strings.Contains(tmpl, "{{") && !json.Valid([]byte(out)) {
		if num, nerr := Render(tmpl, sampleNumericEntity); nerr == nil && json.Valid([]byte(num)) {
			return num, sampleNumericEntity, nil
		}
	}
	return out, SampleEntity, err
}

// ChangeableMembers lists the operation body's members that fingerprint/each-member
// changes one at a time: the first maxChangedMembers of allChangeableMembers.
func (p *Profile) ChangeableMembers() []string {
	all := p.AllChangeableMembers()
	return all[:min(len(all), MaxChangedMembers):min(len(all), MaxChangedMembers)]
}

// AllChangeableMembers lists the operation body's members that fingerprint/each-member
// could change, as gjson-style dotted paths in document order: every scalar leaf (the
// first scalar of an array), except the member that
// names the entity (a change there is another operation, not another payload for this
// one), the key's own member (key_field), the members the profile declares left out
// of the fingerprint (expect.fingerprint_ignores) and, when the body is a JSON-RPC 2.0
// request sent over plain HTTP, its envelope (jsonrpc, id, method). Nil when the body
// is not a JSON object.
func (p *Profile) AllChangeableMembers() []string {
	rendered, sample, err := RenderSample(p.Operation.Body)
	if err != nil {
		return nil
	}
	doc, err := jsonvalue.Parse(rendered)
	if err != nil {
		return p.changeableFormFields(rendered, sample)
	}
	if !doc.IsObject {
		return nil
	}
	ignored := map[string]bool{}
	for _, f := range p.Expect.FingerprintIgnores {
		ignored[f] = true
	}
	// Over MCP the body is the tool's arguments and the harness writes the envelope itself.
	envelope := !p.IsMCP() && doc.IsJSONRPCRequest()
	var out []string
	var walk func(v *jsonvalue.Value, path string)
	walk = func(v *jsonvalue.Value, path string) {
		if ignored[path] || p.IsKeyMember(path) {
			return
		}
		switch {
		case v.IsObject:
			for _, m := range v.Members {
				if envelope && path == "" && jsonvalue.JSONRPCEnvelope[m.Key] {
					continue
				}
				walk(m.Value, jsonvalue.MemberPath(path, m.Key))
			}
		case v.IsArray:
			if len(v.Elems) > 0 && !v.Elems[0].IsObject && !v.Elems[0].IsArray {
				walk(v.Elems[0], jsonvalue.MemberPath(path, "0"))
			}
		case strings.Contains(string(v.Raw), sample):
		default:
			out = append(out, path)
		}
	}
	walk(doc, "")
	return out
}

// IsKeyMember reports whether path (in operation.body) is where key_field puts the key:
// key_field is a path into the request as sent, which over MCP wraps the body (the
// tool's arguments) as params.arguments.
func (p *Profile) IsKeyMember(path string) bool {
	if p.KeyField == "" {
		return false
	}
	if p.IsMCP() {
		return p.KeyField == "params.arguments."+path
	}
	return p.KeyField == path
}

// checkFingerprintIgnores validates expect.fingerprint_ignores: each entry names a member
// of operation.body, so a typo does not silently leave a member changed and judged.
func checkFingerprintIgnores(p *Profile) []fieldError {
	if len(p.Expect.FingerprintIgnores) == 0 {
		return nil
	}
	var doc *jsonvalue.Value
	form := map[string]bool{}
	if rendered, _, err := RenderSample(p.Operation.Body); err == nil {
		doc, _ = jsonvalue.Parse(rendered)
		if fields, ok := FormFields(rendered); ok && doc == nil {
			for _, fl := range fields {
				name, _ := url.QueryUnescape(fl.Name)
				form[name] = true
			}
		}
	}
	var errs []fieldError
	for i, f := range p.Expect.FingerprintIgnores {
		path := fmt.Sprintf("expect.fingerprint_ignores[%d]", i)
		switch {
		case len(form) > 0 && !form[f]:
			errs = append(errs, fieldError{Path: path, Msg: fmt.Sprintf("%q is not a field of operation.body (a form)", f)})
		case len(form) > 0:
		case doc == nil || !doc.IsObject:
			errs = append(errs, fieldError{Path: path, Msg: "operation.body is neither a JSON object nor a form: there is no member to leave out of the fingerprint"})
		case f == "" || doc.At(f) == nil:
			errs = append(errs, fieldError{Path: path, Msg: fmt.Sprintf("%q is not a member of operation.body: name a member as a dotted path, such as note or metadata.trace_id", f)})
		}
	}
	return errs
}

// FormField is one name=value pair of an application/x-www-form-urlencoded body, as
// written (still escaped), in order.
type FormField struct{ Name, Value string }

// FormFields splits a form body (Stripe's request bodies: amount=100&charge=ch_1), ok
// false when it is not one: every pair must have a name and unescape.
func FormFields(body string) ([]FormField, bool) {
	body = strings.TrimSpace(body)
	if body == "" || strings.ContainsAny(body, "{}\" \t\r\n") {
		return nil, false
	}
	var out []FormField
	for _, pair := range strings.Split(body, "&") {
		name, value, found := strings.Cut(pair, "=")
		if _, err := url.QueryUnescape(name); err != nil || name == "" || !found {
			return nil, false
		}
		if _, err := url.QueryUnescape(value); err != nil {
			return nil, false
		}
		out = append(out, FormField{name, value})
	}
	return out, true
}

// changeableFormFields is allChangeableMembers for a form body: its fields by name (a name
// repeated, as in metadata[] lists, once), except the entity's, the key's and the ignored.
func (p *Profile) changeableFormFields(rendered, sample string) []string {
	fields, ok := FormFields(rendered)
	if !ok {
		return nil
	}
	ignored := map[string]bool{}
	for _, f := range p.Expect.FingerprintIgnores {
		ignored[f] = true
	}
	seen := map[string]bool{}
	var out []string
	for _, f := range fields {
		name, _ := url.QueryUnescape(f.Name)
		value, _ := url.QueryUnescape(f.Value)
		if seen[name] || ignored[name] || strings.Contains(value, sample) {
			continue
		}
		seen[name] = true
		out = append(out, name)
	}
	return out
}

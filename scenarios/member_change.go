package scenarios

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/idemproof/idemproof/internal/jsonvalue"
)

// maxChangedMembers bounds how many members fingerprint/each-member changes (one step
// each, one request the target must refuse): enough for the payloads of payment and
// tool-call APIs, where the amount, the account and the currency live, while a slow
// target still gets through the steps within a scenario's time. Members past it are
// named in the verdict as not changed, never passed over in silence.
const maxChangedMembers = 16

// sampleEntity renders templates where only the shape of the result matters.
const sampleEntity = "ip-sample-1"

// sampleNumericEntity renders a body that writes {{.Entity}} unquoted, as a JSON number
// ({"charge": {{.Entity}}}, for an API whose ids are integers): with sampleEntity it is
// no JSON, with this it is.
const sampleNumericEntity = "987654321"

// renderSample renders a template for its shape: with sampleEntity, or with
// sampleNumericEntity when only that gives JSON. It returns the sample it used.
func renderSample(tmpl string) (string, string, error) {
	out, err := render(tmpl, sampleEntity)
	if err != nil || strings.Contains(tmpl, "{{") && !json.Valid([]byte(out)) {
		if num, nerr := render(tmpl, sampleNumericEntity); nerr == nil && json.Valid([]byte(num)) {
			return num, sampleNumericEntity, nil
		}
	}
	return out, sampleEntity, err
}

// changeableMembers lists the operation body's members that fingerprint/each-member
// changes one at a time: the first maxChangedMembers of allChangeableMembers.
func (p *Profile) changeableMembers() []string {
	all := p.allChangeableMembers()
	return all[:min(len(all), maxChangedMembers):min(len(all), maxChangedMembers)]
}

// allChangeableMembers lists the operation body's members that fingerprint/each-member
// could change, as gjson-style dotted paths in document order: every scalar leaf (the
// first scalar of an array), except the member that
// names the entity (a change there is another operation, not another payload for this
// one), the key's own member (key_field), the members the profile declares left out
// of the fingerprint (expect.fingerprint_ignores) and, when the body is a JSON-RPC 2.0
// request sent over plain HTTP, its envelope (jsonrpc, id, method). Nil when the body
// is not a JSON object.
func (p *Profile) allChangeableMembers() []string {
	rendered, sample, err := renderSample(p.Operation.Body)
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
	envelope := !p.isMCP() && doc.IsJSONRPCRequest()
	var out []string
	var walk func(v *jsonvalue.Value, path string)
	walk = func(v *jsonvalue.Value, path string) {
		if ignored[path] || p.isKeyMember(path) {
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

// isKeyMember reports whether path (in operation.body) is where key_field puts the key:
// key_field is a path into the request as sent, which over MCP wraps the body (the
// tool's arguments) as params.arguments.
func (p *Profile) isKeyMember(path string) bool {
	if p.KeyField == "" {
		return false
	}
	if p.isMCP() {
		return p.KeyField == "params.arguments."+path
	}
	return p.KeyField == path
}

// changeMember returns the rendered body with the member at path (from
// changeableMembers) given another value of its type (changedScalar). The body is
// re-encoded compactly, as shapeBody encodes every JSON body.
func changeMember(rendered, path string) (string, error) {
	doc, err := jsonvalue.Parse(rendered)
	if err != nil {
		if fields, ok := formFields(rendered); ok {
			return changeFormField(fields, path)
		}
		return "", fmt.Errorf("change %s: operation.body is neither JSON nor a form: %w", path, err)
	}
	leaf := doc.At(path)
	if leaf == nil || leaf.IsObject || leaf.IsArray {
		return "", fmt.Errorf("change %s: no such scalar member in operation.body", path)
	}
	leaf.Raw = changedScalar(leaf.Raw)
	var b bytes.Buffer
	doc.Encode(&b, "", "")
	return b.String(), nil
}

// changedScalar gives a scalar another value of its type: a number 1 added, a boolean
// flipped, null becomes "changed", a string changedString.
func changedScalar(raw json.RawMessage) json.RawMessage {
	s := string(raw)
	switch {
	case s == "true":
		return json.RawMessage("false")
	case s == "false":
		return json.RawMessage("true")
	case s == "null":
		return json.RawMessage(`"changed"`)
	case strings.HasPrefix(s, `"`):
		var str string
		if json.Unmarshal(raw, &str) == nil {
			out, _ := json.Marshal(changedString(str))
			return out
		}
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return json.RawMessage(strconv.FormatInt(n+1, 10))
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return json.RawMessage(strconv.FormatFloat(f+1, 'f', -1, 64))
	}
	return json.RawMessage(`"changed"`)
}

var (
	decimalString = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)
	currencyCode  = regexp.MustCompile(`^([A-Z]{3}|[a-z]{3})$`)
	isoDate       = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)
)

// changedString gives a string another value a validating API still accepts, so that
// the change reaches the fingerprint instead of a 400: a decimal number ("10.99", as
// money amounts are written) 1 more with as many decimals ("11.99"), three capitals or
// three small letters (an ISO 4217 currency as most APIs write it, Stripe's in lower case)
// another real code in the same case ("USD" becomes "EUR", "usd" "eur", any other "USD"
// or "usd"), an ISO date ("2026-01-31") the next day. Any other string gets
// "-changed" appended.
func changedString(s string) string {
	switch {
	case decimalString.MatchString(s):
		return nextDecimal(s)
	case currencyCode.MatchString(s):
		other := "usd"
		if strings.EqualFold(s, "usd") {
			other = "eur"
		}
		if s == strings.ToUpper(s) {
			other = strings.ToUpper(other)
		}
		return other
	case isoDate.MatchString(s):
		if d, err := time.Parse(time.DateOnly, s); err == nil {
			return d.AddDate(0, 0, 1).Format(time.DateOnly)
		}
	}
	return s + "-changed"
}

// nextDecimal adds 1 to a decimal string (decimalString), keeping its number of decimals
// (and the width of one written with leading zeros): "10.99" is "11.99", "-0.50" is
// "0.50", "-5.00" is "-4.00", "007" is "008". Exact whatever its length.
func nextDecimal(s string) string {
	intPart, frac, _ := strings.Cut(strings.TrimPrefix(s, "-"), ".")
	n, _ := new(big.Int).SetString(intPart+frac, 10)
	if strings.HasPrefix(s, "-") {
		n.Neg(n)
	}
	n.Add(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(len(frac))), nil))
	sign := ""
	if n.Sign() < 0 {
		sign = "-"
		n.Neg(n)
	}
	digits := n.String()
	width := len(frac) + 1
	if len(intPart) > 1 && intPart[0] == '0' {
		width = len(intPart) + len(frac)
	}
	if len(digits) < width {
		digits = strings.Repeat("0", width-len(digits)) + digits
	}
	if len(frac) == 0 {
		return sign + digits
	}
	cut := len(digits) - len(frac)
	return sign + digits[:cut] + "." + digits[cut:]
}

// checkFingerprintIgnores validates expect.fingerprint_ignores: each entry names a member
// of operation.body, so a typo does not silently leave a member changed and judged.
func checkFingerprintIgnores(p *Profile) []fieldError {
	if len(p.Expect.FingerprintIgnores) == 0 {
		return nil
	}
	var doc *jsonvalue.Value
	form := map[string]bool{}
	if rendered, _, err := renderSample(p.Operation.Body); err == nil {
		doc, _ = jsonvalue.Parse(rendered)
		if fields, ok := formFields(rendered); ok && doc == nil {
			for _, fl := range fields {
				name, _ := url.QueryUnescape(fl.name)
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

// formField is one name=value pair of an application/x-www-form-urlencoded body, as
// written (still escaped), in order.
type formField struct{ name, value string }

// formFields splits a form body (Stripe's request bodies: amount=100&charge=ch_1), ok
// false when it is not one: every pair must have a name and unescape.
func formFields(body string) ([]formField, bool) {
	body = strings.TrimSpace(body)
	if body == "" || strings.ContainsAny(body, "{}\" \t\r\n") {
		return nil, false
	}
	var out []formField
	for _, pair := range strings.Split(body, "&") {
		name, value, found := strings.Cut(pair, "=")
		if _, err := url.QueryUnescape(name); err != nil || name == "" || !found {
			return nil, false
		}
		if _, err := url.QueryUnescape(value); err != nil {
			return nil, false
		}
		out = append(out, formField{name, value})
	}
	return out, true
}

// changeableFormFields is allChangeableMembers for a form body: its fields by name (a name
// repeated, as in metadata[] lists, once), except the entity's, the key's and the ignored.
func (p *Profile) changeableFormFields(rendered, sample string) []string {
	fields, ok := formFields(rendered)
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
		name, _ := url.QueryUnescape(f.name)
		value, _ := url.QueryUnescape(f.value)
		if seen[name] || ignored[name] || strings.Contains(value, sample) {
			continue
		}
		seen[name] = true
		out = append(out, name)
	}
	return out
}

// changeFormField gives the first field named name another value of its kind: an
// integer 1 more, any other value changedString's.
func changeFormField(fields []formField, name string) (string, error) {
	changed := false
	parts := make([]string, len(fields))
	for i, f := range fields {
		n, _ := url.QueryUnescape(f.name)
		v := f.value
		if n == name && !changed {
			raw, _ := url.QueryUnescape(v)
			if num, err := strconv.ParseInt(raw, 10, 64); err == nil {
				v = strconv.FormatInt(num+1, 10)
			} else {
				v = url.QueryEscape(changedString(raw))
			}
			changed = true
		}
		parts[i] = f.name + "=" + v
	}
	if !changed {
		return "", fmt.Errorf("change %s: no such field in operation.body", name)
	}
	return strings.Join(parts, "&"), nil
}

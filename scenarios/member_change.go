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

	"github.com/idemproof/idemproof/faultproxy"
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
	doc, err := parseJSON(rendered)
	if err != nil {
		return p.changeableFormFields(rendered, sample)
	}
	if !doc.isObj {
		return nil
	}
	ignored := map[string]bool{}
	for _, f := range p.Expect.FingerprintIgnores {
		ignored[f] = true
	}
	// Over MCP the body is the tool's arguments and the harness writes the envelope itself.
	envelope := !p.isMCP() && doc.isJSONRPCRequest()
	var out []string
	var walk func(v *jsonValue, path string)
	walk = func(v *jsonValue, path string) {
		if ignored[path] || p.isKeyMember(path) {
			return
		}
		switch {
		case v.isObj:
			for _, m := range v.obj {
				if envelope && path == "" && jsonRPCEnvelope[m.Key] {
					continue
				}
				walk(m.Value, memberPath(path, m.Key))
			}
		case v.isArr:
			if len(v.arr) > 0 && !v.arr[0].isObj && !v.arr[0].isArr {
				walk(v.arr[0], memberPath(path, "0"))
			}
		case strings.Contains(string(v.raw), sample):
		default:
			out = append(out, path)
		}
	}
	walk(doc, "")
	return out
}

// jsonRPCEnvelope names the top-level members of a JSON-RPC 2.0 request that frame the
// call rather than carry its payload. A server answers with the request's id (JSON-RPC
// 2.0 §5), so a changed or respelled id comes back in a correct replay, which would then
// look like a response of its own; the version and the method name the call itself.
var jsonRPCEnvelope = map[string]bool{"jsonrpc": true, "id": true, "method": true}

// isJSONRPCRequest reports whether v is a JSON-RPC 2.0 request: an object with
// "jsonrpc": "2.0" and a string method.
func (v *jsonValue) isJSONRPCRequest() bool {
	if v == nil || !v.isObj {
		return false
	}
	var version, method bool
	for _, m := range v.obj {
		var s string
		isString := !m.Value.isObj && !m.Value.isArr && json.Unmarshal(m.Value.raw, &s) == nil
		switch m.Key {
		case "jsonrpc":
			version = isString && s == "2.0"
		case "method":
			method = isString
		}
	}
	return version && method
}

// respellPayloadIntegers is respellIntegers for fingerprint/number-spelling: in a JSON-RPC
// 2.0 request only the payload is respelled, never the envelope (an id of 1 respelled
// 1.0 comes back as 1.0 in a correct replay). Over MCP the harness replaces the id of
// the request it framed on every attempt anyway.
func (v *jsonValue) respellPayloadIntegers() bool {
	if !v.isJSONRPCRequest() {
		return v.respellIntegers()
	}
	changed := false
	for _, m := range v.obj {
		if !jsonRPCEnvelope[m.Key] {
			changed = m.Value.respellIntegers() || changed
		}
	}
	return changed
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

func memberPath(parent, member string) string {
	if parent == "" {
		return strings.ReplaceAll(member, ".", `\.`)
	}
	return parent + "." + strings.ReplaceAll(member, ".", `\.`)
}

// changeMember returns the rendered body with the member at path (from
// changeableMembers) given another value of its type (changedScalar). The body is
// re-encoded compactly, as shapeBody encodes every JSON body.
func changeMember(rendered, path string) (string, error) {
	doc, err := parseJSON(rendered)
	if err != nil {
		if fields, ok := formFields(rendered); ok {
			return changeFormField(fields, path)
		}
		return "", fmt.Errorf("change %s: operation.body is neither JSON nor a form: %w", path, err)
	}
	leaf := doc.at(path)
	if leaf == nil || leaf.isObj || leaf.isArr {
		return "", fmt.Errorf("change %s: no such scalar member in operation.body", path)
	}
	leaf.raw = changedScalar(leaf.raw)
	var b bytes.Buffer
	doc.encode(&b, "", "")
	return b.String(), nil
}

// at finds the value at a dotted path (a member name may escape a dot as `\.`; an array
// element is its index), nil when there is none.
func (v *jsonValue) at(path string) *jsonValue {
	cur := v
	for _, part := range splitPath(path) {
		switch {
		case cur.isObj:
			var next *jsonValue
			for _, m := range cur.obj {
				if m.Key == part {
					next = m.Value
				}
			}
			cur = next
		case cur.isArr:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(cur.arr) {
				return nil
			}
			cur = cur.arr[i]
		default:
			return nil
		}
		if cur == nil {
			return nil
		}
	}
	return cur
}

// splitPath splits a dotted path at the dots that are not escaped.
func splitPath(path string) []string { return faultproxy.SplitKeyField(path) }

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
	var doc *jsonValue
	form := map[string]bool{}
	if rendered, _, err := renderSample(p.Operation.Body); err == nil {
		doc, _ = parseJSON(rendered)
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
		case doc == nil || !doc.isObj:
			errs = append(errs, fieldError{Path: path, Msg: "operation.body is neither a JSON object nor a form: there is no member to leave out of the fingerprint"})
		case f == "" || doc.at(f) == nil:
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

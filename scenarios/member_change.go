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
	"github.com/idemproof/idemproof/profile"
)

// changeMember returns the rendered body with the member at path (from
// changeableMembers) given another value of its type (changedScalar). The body is
// re-encoded compactly, as shapeBody encodes every JSON body.
func changeMember(rendered, path string) (string, error) {
	doc, err := jsonvalue.Parse(rendered)
	if err != nil {
		if fields, ok := profile.FormFields(rendered); ok {
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

// changeFormField gives the first field named name another value of its kind: an
// integer 1 more, any other value changedString's.
func changeFormField(fields []profile.FormField, name string) (string, error) {
	changed := false
	parts := make([]string, len(fields))
	for i, f := range fields {
		n, _ := url.QueryUnescape(f.Name)
		v := f.Value
		if n == name && !changed {
			raw, _ := url.QueryUnescape(v)
			if num, err := strconv.ParseInt(raw, 10, 64); err == nil {
				v = strconv.FormatInt(num+1, 10)
			} else {
				v = url.QueryEscape(changedString(raw))
			}
			changed = true
		}
		parts[i] = f.Name + "=" + v
	}
	if !changed {
		return "", fmt.Errorf("change %s: no such field in operation.body", name)
	}
	return strings.Join(parts, "&"), nil
}

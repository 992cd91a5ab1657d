package faultproxy

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// keyFromBody extracts the idempotency key at a dotted path of a JSON body. Strings are
// taken as they are, numbers by their literal spelling; anything else (absent, null,
// object, invalid JSON) means "no key".
func keyFromBody(body []byte, field string) (string, bool) {
	if len(body) == 0 {
		return "", false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", false
	}
	for _, seg := range strings.Split(field, ".") {
		switch node := v.(type) {
		case map[string]any:
			v = node[seg]
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(node) {
				return "", false
			}
			v = node[i]
		default:
			return "", false
		}
	}
	switch k := v.(type) {
	case string:
		return k, true
	case json.Number:
		return k.String(), true
	}
	return "", false
}

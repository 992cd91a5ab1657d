package idempotency

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math/big"
	"slices"
	"strconv"
	"strings"
)

// Fingerprint identifies a request's payload: method, path, principal and the canonical
// JSON body. Key order, whitespace and number spelling (4900, 4900.0, 4.9e3) do not
// change it; values do. A body that is not JSON is fingerprinted byte for byte.
func Fingerprint(method, path, principal string, body []byte) string {
	h := sha256.New()
	for _, part := range []string{method, path, principal} {
		h.Write([]byte(strconv.Itoa(len(part))))
		h.Write([]byte{':'})
		h.Write([]byte(part))
	}
	if canon, ok := CanonicalJSON(body); ok {
		h.Write([]byte("json:"))
		h.Write(canon)
	} else {
		h.Write([]byte("raw:"))
		h.Write(body)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// CanonicalJSON re-encodes a JSON document with sorted object keys, no insignificant
// whitespace and numbers in one spelling (exact rationals). ok is false when body is
// not a single JSON value.
func CanonicalJSON(body []byte) ([]byte, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if dec.More() {
		return nil, false
	}
	var buf bytes.Buffer
	if !writeCanonical(&buf, v) {
		return nil, false
	}
	return buf.Bytes(), true
}

func writeCanonical(buf *bytes.Buffer, v any) bool {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			kb, _ := json.Marshal(k)
			buf.Write(kb)
			buf.WriteByte(':')
			if !writeCanonical(buf, x[k]) {
				return false
			}
		}
		buf.WriteByte('}')
	case []any:
		buf.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			if !writeCanonical(buf, e) {
				return false
			}
		}
		buf.WriteByte(']')
	case json.Number:
		if plainInteger(string(x)) {
			buf.WriteString(string(x)) // already canonical; skips the big.Rat
			break
		}
		r, ok := new(big.Rat).SetString(string(x))
		if !ok {
			return false
		}
		buf.WriteString(r.RatString())
	default: // string, bool, nil
		b, err := json.Marshal(x)
		if err != nil {
			return false
		}
		buf.Write(b)
	}
	return true
}

// plainInteger reports whether s is an integer JSON spells only one way: an optional
// minus, then digits without a leading zero (JSON forbids those anyway), and not -0.
func plainInteger(s string) bool {
	digits := strings.TrimPrefix(s, "-")
	if digits == "" || digits == "0" && s != "0" {
		return false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return false
		}
	}
	return true
}

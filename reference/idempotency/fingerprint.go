package idempotency

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// Fingerprint identifies a request's payload: method, path, principal and the canonical
// JSON body (CanonicalJSON). Key order, whitespace and number spelling (4900, 4900.0,
// 4.9e3) do not change it; values do. A body that is not JSON is fingerprinted byte for
// byte. A JSON body whose meaning the fingerprint could not pin down — two members a
// decoder takes for one name, a number beyond float64 — is refused with a *BodyError
// (the middleware answers it 400 before recording the key); the string is then empty.
func Fingerprint(method, path, principal string, body []byte) (string, error) {
	// The canonicalizer writes an object's values, then the sorted object, past the
	// prefix: twice the body, so the buffer rarely grows.
	buf := make([]byte, 0, len(method)+len(path)+len(principal)+2*len(body)+32)
	for _, part := range [...]string{method, path, principal} {
		// Length-prefixed, so a character cannot move from one part to the next.
		buf = strconv.AppendInt(buf, int64(len(part)), 10)
		buf = append(buf, ':')
		buf = append(buf, part...)
	}
	prefix := len(buf)
	buf = append(buf, "json:"...)
	buf, ok, err := appendCanonicalJSON(buf, body)
	if err != nil {
		return "", err
	}
	if !ok {
		buf = append(append(buf[:prefix], "raw:"...), body...)
	}
	sum := sha256.Sum256(buf)
	var digits [2 * sha256.Size]byte
	hex.Encode(digits[:], sum[:])
	return string(digits[:]), nil
}

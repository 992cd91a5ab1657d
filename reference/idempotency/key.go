package idempotency

import (
	"errors"
	"fmt"
	"strings"
)

// MaxKeyLength is the longest key accepted, in bytes.
const MaxKeyLength = 255

// ErrNoKey is returned by ParseKey when the request carries no key header.
var ErrNoKey = errors.New("no idempotency key")

// ParseKey validates the values of an Idempotency-Key header. A key is 1–255 printable
// ASCII characters (0x20–0x7E); the RFC 8941 sf-string form ("abc", with \" and \\
// escapes) means the same key as its content.
func ParseKey(values []string) (string, error) {
	switch len(values) {
	case 0:
		return "", ErrNoKey
	case 1:
	default:
		return "", errors.New("send exactly one Idempotency-Key header")
	}
	key := values[0]
	if len(key) >= 2 && key[0] == '"' && key[len(key)-1] == '"' {
		unquoted, err := unquoteSFString(key)
		if err != nil {
			return "", err
		}
		key = unquoted
	}
	if key == "" {
		return "", errors.New("the Idempotency-Key is empty: send 1 to 255 printable ASCII characters")
	}
	if len(key) > MaxKeyLength {
		return "", fmt.Errorf("the Idempotency-Key is %d characters long: send at most %d", len(key), MaxKeyLength)
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x20 || c > 0x7e {
			return "", fmt.Errorf("the Idempotency-Key has a non-printable or non-ASCII byte 0x%02x at offset %d: use printable ASCII only", c, i)
		}
	}
	return key, nil
}

// unquoteSFString decodes an RFC 8941 sf-string: only \" and \\ are valid escapes.
func unquoteSFString(s string) (string, error) {
	inner := s[1 : len(s)-1]
	var b strings.Builder
	for i := 0; i < len(inner); i++ {
		c := inner[i]
		switch {
		case c == '\\':
			if i+1 == len(inner) || (inner[i+1] != '"' && inner[i+1] != '\\') {
				return "", errors.New(`the quoted Idempotency-Key has an invalid escape: only \" and \\ are allowed`)
			}
			i++
			b.WriteByte(inner[i])
		case c == '"':
			return "", errors.New(`the quoted Idempotency-Key has an unescaped '"' inside`)
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

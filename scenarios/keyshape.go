package scenarios

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"
)

// Key forms beyond the scenario's own key, each fresh per scenario run (derived from the
// scenario's key): another key, and valid keys of other shapes.
const (
	KeyOther       KeyForm = "other"        // a second fresh key: another operation with the same payload
	KeyEmptyQuoted KeyForm = "empty-quoted" // `""`: the RFC 8941 sf-string of the empty string
	KeyUUID        KeyForm = "uuid"         // a UUID (36 characters, the shape many libraries expect)
	KeyULID        KeyForm = "ulid"         // 26 characters of Crockford base32, as a ULID is written
	KeyBase64URL   KeyForm = "base64url"    // 43 characters of base64url, - and _ among them
	KeyOneChar     KeyForm = "one-char"     // a single character: the shortest valid key

	// Pairs of distinct keys that a key-handling bug would take for one key.
	KeyCaseFirst  KeyForm = "case-first"  // the scenario's key with upper- and lower-case letters
	KeyCaseSecond KeyForm = "case-second" // KeyCaseFirst with every letter's case swapped
	// The longest key the API accepts (255, or expect.max_key_length), twice: all but
	// the last character shared, so that a store keeping fewer characters of a key (a
	// VARCHAR(64) column, a prefix index, MySQL's 191, the first 32 of AWS's 64) sees the
	// two keys as one.
	KeyLongPrefixFirst  KeyForm = "long-prefix-first"  // the shared prefix, then "1"
	KeyLongPrefixSecond KeyForm = "long-prefix-second" // the shared prefix, then "2"
)

// PayloadLedgerRead sends the side_effects probe (its method, path and headers, no body)
// as the step's request, carrying the step's key.
const PayloadLedgerRead Payload = "ledger-read"

// crockford is the ULID alphabet (no I, L, O, U).
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// shaped returns the key of a shape form, derived from the scenario's key so that it is
// fresh for every run and the same for every step of one run.
func (k scenarioKeys) shaped(f KeyForm) (string, bool) {
	sum := sha256.Sum256([]byte(k.main + "/" + string(f)))
	switch f {
	case KeyOther:
		return k.derived("other"), true
	case KeyEmptyQuoted:
		return `""`, true
	case KeyUUID:
		return keyUUID(k.main + "/" + string(f)), true
	case KeyULID:
		var s strings.Builder
		for i := 0; i < 26; i++ {
			s.WriteByte(crockford[int(sum[i])%len(crockford)])
		}
		return s.String(), true
	case KeyBase64URL:
		// Make sure both characters that differ from standard base64 appear.
		return base64.RawURLEncoding.EncodeToString(sum[:30]) + "-_" + base64.RawURLEncoding.EncodeToString(sum[30:31])[:1], true
	case KeyOneChar:
		// 62 possible keys: a run inside the retention of an earlier one may meet its
		// key, which the checker allows for (see validNever5xx).
		const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
		return string(alnum[int(sum[0])%len(alnum)]), true
	case KeyCaseFirst:
		return k.main + "-CaseKey", true
	case KeyCaseSecond:
		return swapCase(k.main + "-CaseKey"), true
	case KeyLongPrefixFirst, KeyLongPrefixSecond:
		prefix := k.main + "-" + strings.Repeat("p", k.maxLen-1-len(k.main)-1)
		if f == KeyLongPrefixFirst {
			return prefix + "1", true
		}
		return prefix + "2", true
	}
	return "", false
}

// swapCase swaps the case of every ASCII letter: the same key to a store that folds case.
func swapCase(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case 'a' <= c && c <= 'z':
			b[i] = c - 'a' + 'A'
		case 'A' <= c && c <= 'Z':
			b[i] = c - 'A' + 'a'
		}
	}
	return string(b)
}

// setKey is key i of a step's key set.
func (k scenarioKeys) setKey(set string, i int) string {
	return k.derived(fmt.Sprintf("%s%03d", set, i))
}

package faultproxy

import (
	"slices"
	"sort"
)

// Journal analysis: pure functions over []Record that name the two classic client bugs
// the journal makes visible. They look only at what the proxy saw, never at what the
// client believes it sent, and take records in any order. "Journal order" below is
// arrival order (Time, then Seq): Seq numbers an attempt when it is journaled, after it
// was answered, so a reset first attempt may get a higher Seq than its own retry.
//
// What they can and cannot tell: the body hash identifies a payload, so two different
// logical operations with byte-identical bodies look like one payload. For APIs that
// carry the key inside the body (KeyField), the body hash changes with the key and a
// key minted per attempt is invisible to FreshKeyRetries; group by the entity instead.

// PayloadUnderKeys is one request payload (method, path and body) that went out under
// more than one idempotency key.
type PayloadUnderKeys struct {
	Method     string   `json:"method"`
	Path       string   `json:"path"`
	BodySHA256 string   `json:"body_sha256"`
	Keys       []string `json:"keys"` // distinct keys, in the order they were first seen
	Seqs       []uint64 `json:"seqs"` // every keyed attempt of the payload, in journal order
}

// FreshKeyRetries returns the payloads retried under a fresh key: the same method, path
// and body sent under two or more distinct idempotency keys. It is the journal's
// signature of a key minted per attempt (inside the retry closure, or from a timestamp),
// which turns every retry into a new operation for the server. Unkeyed attempts are
// ignored (see UnkeyedAttempts). The result is ordered by first appearance.
func FreshKeyRetries(records []Record) []PayloadUnderKeys {
	type payload struct{ method, path, body string }
	var order []payload
	found := map[payload]*PayloadUnderKeys{}
	for _, r := range InArrivalOrder(records) {
		if !r.HasKey {
			continue
		}
		p := payload{r.Method, r.Path, r.BodySHA256}
		g, ok := found[p]
		if !ok {
			g = &PayloadUnderKeys{Method: r.Method, Path: r.Path, BodySHA256: r.BodySHA256}
			found[p] = g
			order = append(order, p)
		}
		if !slices.Contains(g.Keys, r.Key) {
			g.Keys = append(g.Keys, r.Key)
		}
		g.Seqs = append(g.Seqs, r.Seq)
	}
	var out []PayloadUnderKeys
	for _, p := range order {
		if g := found[p]; len(g.Keys) > 1 {
			out = append(out, *g)
		}
	}
	return out
}

// UnkeyedAttempts returns the attempts that carried no idempotency key, in journal
// order. Filter the records to the keyed operation first (method and path): a GET of a
// ledger legitimately carries no key.
func UnkeyedAttempts(records []Record) []Record {
	var out []Record
	for _, r := range InArrivalOrder(records) {
		if !r.HasKey {
			out = append(out, r)
		}
	}
	return out
}

// AttemptsByKey groups keyed attempts per key, each group in journal order; keys are
// returned in the order they were first seen.
func AttemptsByKey(records []Record) (keys []string, byKey map[string][]Record) {
	byKey = map[string][]Record{}
	for _, r := range InArrivalOrder(records) {
		if !r.HasKey {
			continue
		}
		if _, ok := byKey[r.Key]; !ok {
			keys = append(keys, r.Key)
		}
		byKey[r.Key] = append(byKey[r.Key], r)
	}
	return keys, byKey
}

// InArrivalOrder returns a copy of records sorted by arrival (Time, then Seq), so callers
// may pass journal pages in any order.
func InArrivalOrder(records []Record) []Record {
	out := slices.Clone(records)
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].Time.Equal(out[j].Time) {
			return out[i].Time.Before(out[j].Time)
		}
		return out[i].Seq < out[j].Seq
	})
	return out
}

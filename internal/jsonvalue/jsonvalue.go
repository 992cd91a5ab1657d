// Package jsonvalue is a JSON document model that keeps what the standard library's
// decoder throws away: the order of an object's members and the spelling of every scalar
// (4900 stays 4900, 4900.0 stays 4900.0). The harness needs both to change one thing in
// a request body and nothing else — put a key at a dotted path, reverse the member order,
// respell integers as decimals, change one member, compare two bodies canonically —
// because a target may fingerprint the bytes. Hand-written because no library here does
// it: gjson and sjson read and splice bytes but neither reorders nor respells, and
// encoding/json's maps lose the order.
//
// Dotted paths are gjson's: members joined by dots, a dot inside a name escaped as \.,
// an array element by its index.
package jsonvalue

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// Value is a JSON document that keeps its object keys in order, so the runner can put
// a key into a body, or reorder or respell it, without changing anything else.
type Value struct {
	Members  []Member // object, in document order (IsObject)
	IsObject bool
	Elems    []*Value // array (IsArray)
	IsArray  bool
	Raw      json.RawMessage // any scalar, as written
}

// Member is one member of an object: its name and value.
type Member struct {
	Key   string
	Value *Value
}

// Parse reads one JSON value, numbers as written; trailing data is an error.
func Parse(s string) (*Value, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	v, err := decodeJSONValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data after the JSON value")
	}
	return v, nil
}

func decodeJSONValue(dec *json.Decoder) (*Value, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			v := &Value{IsObject: true}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				child, err := decodeJSONValue(dec)
				if err != nil {
					return nil, err
				}
				v.Members = append(v.Members, Member{Key: kt.(string), Value: child})
			}
			_, err := dec.Token()
			return v, err
		case '[':
			v := &Value{IsArray: true}
			for dec.More() {
				child, err := decodeJSONValue(dec)
				if err != nil {
					return nil, err
				}
				v.Elems = append(v.Elems, child)
			}
			_, err := dec.Token()
			return v, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		raw, err := json.Marshal(tok)
		if n, ok := tok.(json.Number); ok {
			raw = []byte(n.String())
		}
		return &Value{Raw: raw}, err
	}
}

// Encode writes the value; indent "" is compact, otherwise one member per line.
func (v *Value) Encode(b *bytes.Buffer, indent, prefix string) {
	nl := func(p string) {
		if indent != "" {
			b.WriteString("\n" + p)
		}
	}
	sep := ":"
	if indent != "" {
		sep = ": "
	}
	switch {
	case v.IsObject:
		b.WriteByte('{')
		for i, m := range v.Members {
			if i > 0 {
				b.WriteByte(',')
			}
			nl(prefix + indent)
			k, _ := json.Marshal(m.Key)
			b.Write(k)
			b.WriteString(sep)
			m.Value.Encode(b, indent, prefix+indent)
		}
		if len(v.Members) > 0 {
			nl(prefix)
		}
		b.WriteByte('}')
	case v.IsArray:
		b.WriteByte('[')
		for i, c := range v.Elems {
			if i > 0 {
				b.WriteByte(',')
			}
			nl(prefix + indent)
			c.Encode(b, indent, prefix+indent)
		}
		if len(v.Elems) > 0 {
			nl(prefix)
		}
		b.WriteByte(']')
	default:
		b.Write(v.Raw)
	}
}

func (v *Value) String() string {
	var b bytes.Buffer
	v.Encode(&b, "", "")
	return b.String()
}

// SetIn puts value at a dotted path of the JSON document doc (Set) and returns the
// document in its compact spelling, its members in their order: how a key or a test
// hook is put into a request body.
func SetIn(doc, path string, value *Value) (string, error) {
	v, err := Parse(doc)
	if err != nil {
		return "", fmt.Errorf("not JSON: %w", err)
	}
	if err := v.Set(path, value); err != nil {
		return "", err
	}
	return v.String(), nil
}

// Set puts value at a dotted path, creating objects on the way; an existing member keeps
// its position.
func (v *Value) Set(path string, value *Value) error {
	parts := SplitPath(path)
	cur := v
	for i, part := range parts {
		if !cur.IsObject {
			return fmt.Errorf("%s: %s is not a JSON object", path, strings.Join(parts[:i], "."))
		}
		var next *Value
		for j := range cur.Members {
			if cur.Members[j].Key == part {
				if i == len(parts)-1 {
					cur.Members[j].Value = value
					return nil
				}
				next = cur.Members[j].Value
			}
		}
		if next == nil {
			if i == len(parts)-1 {
				cur.Members = append(cur.Members, Member{Key: part, Value: value})
				return nil
			}
			next = &Value{IsObject: true}
			cur.Members = append(cur.Members, Member{Key: part, Value: next})
		}
		cur = next
	}
	return nil
}

// ReverseKeys reverses the member order of every object: the same JSON, another order.
func (v *Value) ReverseKeys() {
	if v.IsObject {
		for i, j := 0, len(v.Members)-1; i < j; i, j = i+1, j-1 {
			v.Members[i], v.Members[j] = v.Members[j], v.Members[i]
		}
		for _, m := range v.Members {
			m.Value.ReverseKeys()
		}
	}
	for _, c := range v.Elems {
		c.ReverseKeys()
	}
}

// RespellIntegers writes every integer as a decimal ("4900" becomes "4900.0") and reports
// whether there was one.
func (v *Value) RespellIntegers() bool {
	changed := false
	switch {
	case v.IsObject:
		for _, m := range v.Members {
			changed = m.Value.RespellIntegers() || changed
		}
	case v.IsArray:
		for _, c := range v.Elems {
			changed = c.RespellIntegers() || changed
		}
	default:
		if _, err := strconv.ParseInt(string(v.Raw), 10, 64); err == nil {
			v.Raw = append(v.Raw, ".0"...)
			changed = true
		}
	}
	return changed
}

// NewString is the JSON string s.
func NewString(s string) *Value {
	raw, _ := json.Marshal(s)
	return &Value{Raw: raw}
}

// SortMembers orders every object's members by name (stable: repeated names keep their
// order), so two encodings of one value encode alike.
func (v *Value) SortMembers() {
	slices.SortStableFunc(v.Members, func(a, b Member) int { return strings.Compare(a.Key, b.Key) })
	for _, m := range v.Members {
		m.Value.SortMembers()
	}
	for _, c := range v.Elems {
		c.SortMembers()
	}
}

package scenarios

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// jsonValue is a JSON document that keeps its object keys in order, so the runner can put
// a key into a body, or reorder or respell it, without changing anything else.
type jsonValue struct {
	obj   []jsonMember // object, in document order (isObj)
	isObj bool
	arr   []*jsonValue // array (isArr)
	isArr bool
	raw   json.RawMessage // any scalar, as written
}

type jsonMember struct {
	Key   string
	Value *jsonValue
}

func parseJSON(s string) (*jsonValue, error) {
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

func decodeJSONValue(dec *json.Decoder) (*jsonValue, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			v := &jsonValue{isObj: true}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				child, err := decodeJSONValue(dec)
				if err != nil {
					return nil, err
				}
				v.obj = append(v.obj, jsonMember{Key: kt.(string), Value: child})
			}
			_, err := dec.Token()
			return v, err
		case '[':
			v := &jsonValue{isArr: true}
			for dec.More() {
				child, err := decodeJSONValue(dec)
				if err != nil {
					return nil, err
				}
				v.arr = append(v.arr, child)
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
		return &jsonValue{raw: raw}, err
	}
}

// encode writes the value; indent "" is compact, otherwise one member per line.
func (v *jsonValue) encode(b *bytes.Buffer, indent, prefix string) {
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
	case v.isObj:
		b.WriteByte('{')
		for i, m := range v.obj {
			if i > 0 {
				b.WriteByte(',')
			}
			nl(prefix + indent)
			k, _ := json.Marshal(m.Key)
			b.Write(k)
			b.WriteString(sep)
			m.Value.encode(b, indent, prefix+indent)
		}
		if len(v.obj) > 0 {
			nl(prefix)
		}
		b.WriteByte('}')
	case v.isArr:
		b.WriteByte('[')
		for i, c := range v.arr {
			if i > 0 {
				b.WriteByte(',')
			}
			nl(prefix + indent)
			c.encode(b, indent, prefix+indent)
		}
		if len(v.arr) > 0 {
			nl(prefix)
		}
		b.WriteByte(']')
	default:
		b.Write(v.raw)
	}
}

func (v *jsonValue) String() string {
	var b bytes.Buffer
	v.encode(&b, "", "")
	return b.String()
}

// set puts value at a dotted path, creating objects on the way; an existing member keeps
// its position.
func (v *jsonValue) set(path string, value *jsonValue) error {
	parts := splitPath(path)
	cur := v
	for i, part := range parts {
		if !cur.isObj {
			return fmt.Errorf("key_field %s: %s is not a JSON object", path, strings.Join(parts[:i], "."))
		}
		var next *jsonValue
		for j := range cur.obj {
			if cur.obj[j].Key == part {
				if i == len(parts)-1 {
					cur.obj[j].Value = value
					return nil
				}
				next = cur.obj[j].Value
			}
		}
		if next == nil {
			if i == len(parts)-1 {
				cur.obj = append(cur.obj, jsonMember{Key: part, Value: value})
				return nil
			}
			next = &jsonValue{isObj: true}
			cur.obj = append(cur.obj, jsonMember{Key: part, Value: next})
		}
		cur = next
	}
	return nil
}

// reverseKeys reverses the member order of every object: the same JSON, another order.
func (v *jsonValue) reverseKeys() {
	if v.isObj {
		for i, j := 0, len(v.obj)-1; i < j; i, j = i+1, j-1 {
			v.obj[i], v.obj[j] = v.obj[j], v.obj[i]
		}
		for _, m := range v.obj {
			m.Value.reverseKeys()
		}
	}
	for _, c := range v.arr {
		c.reverseKeys()
	}
}

// respellIntegers writes every integer as a decimal ("4900" becomes "4900.0") and reports
// whether there was one.
func (v *jsonValue) respellIntegers() bool {
	changed := false
	switch {
	case v.isObj:
		for _, m := range v.obj {
			changed = m.Value.respellIntegers() || changed
		}
	case v.isArr:
		for _, c := range v.arr {
			changed = c.respellIntegers() || changed
		}
	default:
		if _, err := strconv.ParseInt(string(v.raw), 10, 64); err == nil {
			v.raw = append(v.raw, ".0"...)
			changed = true
		}
	}
	return changed
}

func jsonString(s string) *jsonValue {
	raw, _ := json.Marshal(s)
	return &jsonValue{raw: raw}
}

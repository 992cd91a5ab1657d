package scenarios

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/idemproof/idemproof/internal/jsonvalue"
	"github.com/idemproof/idemproof/profile"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// sameBody reports whether two bodies say the same: the same bytes, or, when both are
// JSON, the same JSON value once the profile's expect.volatile_fields are left out. A
// stored response re-serialized for its replay (from a jsonb column, by another
// encoder) comes back with its members in another order and other whitespace; no client
// that parses it can tell, so that is no divergence. Whether the bytes themselves were
// kept is replay/fidelity-body's question (bytesChanged).
func sameBody(p *profile.Profile, a, b []byte) bool {
	if bytes.Equal(a, b) && len(p.Expect.VolatileFields) == 0 {
		return true
	}
	ca, okA := canonicalJSON(p, a)
	cb, okB := canonicalJSON(p, b)
	if okA && okB {
		return bytes.Equal(ca, cb)
	}
	return bytes.Equal(a, b)
}

// bodyKey is a body as a map key under sameBody's equality: two bodies have the same key
// exactly when sameBody calls them the same.
func bodyKey(p *profile.Profile, b []byte) string {
	if c, ok := canonicalJSON(p, b); ok {
		return "json " + string(c)
	}
	return "bytes " + string(b)
}

// canonicalJSON is a JSON body without the volatile fields, its object members sorted by
// name at every depth and no insignificant whitespace; false when the body is not JSON.
func canonicalJSON(p *profile.Profile, body []byte) ([]byte, bool) {
	if !gjson.ValidBytes(body) {
		return nil, false
	}
	for _, path := range p.Expect.VolatileFields {
		if out, err := sjson.DeleteBytes(body, path); err == nil {
			body = out
		}
	}
	v, err := jsonvalue.Parse(string(body))
	if err != nil {
		return nil, false
	}
	v.SortMembers()
	var out bytes.Buffer
	v.Encode(&out, "", "")
	return out.Bytes(), true
}

// volatileDiffer reports whether two bodies that sameBody calls the same differ in a
// declared volatile field (a request id), for messages that say so.
func volatileDiffer(p *profile.Profile, a, b []byte) bool {
	for _, path := range p.Expect.VolatileFields {
		if gjson.GetBytes(a, path).Raw != gjson.GetBytes(b, path).Raw {
			return true
		}
	}
	return false
}

// volatileHint follows changedMembers in a message about a replay that differs.
const volatileHint = "; a member that differs in every response, the replay's too, can be declared in expect.volatile_fields"

// changedMembers names the top-level members in which two JSON object bodies differ,
// "request_id changed" or "request_id and served_at changed" (at most three named): ""
// when either is no object or they differ otherwise too (members added or removed).
func changedMembers(a, b []byte) string {
	ra, rb := gjson.ParseBytes(a), gjson.ParseBytes(b)
	if !ra.IsObject() || !rb.IsObject() || !gjson.ValidBytes(a) || !gjson.ValidBytes(b) {
		return ""
	}
	ma, mb := ra.Map(), rb.Map()
	if len(ma) != len(mb) {
		return ""
	}
	var names []string
	for k, va := range ma {
		vb, ok := mb[k]
		if !ok {
			return ""
		}
		if va.Raw != vb.Raw {
			names = append(names, k)
		}
	}
	if len(names) == 0 {
		return ""
	}
	slices.Sort(names)
	more := ""
	if len(names) > 3 {
		more, names = fmt.Sprintf(" and %d more", len(names)-3), names[:3]
	}
	return strings.Join(names, ", ") + more + " changed"
}

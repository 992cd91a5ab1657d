package profile

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/idemproof/idemproof/internal/jsonvalue"
)

// ApplySlowHook puts slow_operation, as declared (its hold), on a request for entity:
// the header set on h, the query added to path, the path replaced, or the field set in
// the JSON body. It returns the path and the body to send; without slow_operation they
// and h are unchanged.
func (p *Profile) ApplySlowHook(path string, h http.Header, body, entity string) (string, string, error) {
	if p.Slow == nil {
		return path, body, nil
	}
	data := HookData{Entity: entity, HoldMs: p.Slow.HoldDuration().Milliseconds(), Value: p.Slow.Value}
	if p.Slow.Header != "" || p.Slow.Field != "" {
		v, err := RenderHook(p.Slow.Value, data)
		if err != nil {
			return path, body, fmt.Errorf("render slow_operation value: %w", err)
		}
		if p.Slow.Header != "" {
			h.Set(p.Slow.Header, v)
		} else if body, err = setBodyField(body, p.Slow.Form(), v); err != nil {
			return path, body, fmt.Errorf("slow_operation.field: %w", err)
		}
	}
	if p.Slow.Path != "" {
		v, err := RenderHook(p.Slow.Path, data)
		if err != nil {
			return path, body, fmt.Errorf("render slow_operation path: %w", err)
		}
		path = v
	}
	if len(p.Slow.Query) > 0 {
		q := url.Values{}
		for _, k := range slices.Sorted(maps.Keys(p.Slow.Query)) {
			v, err := RenderHook(p.Slow.Query[k], data)
			if err != nil {
				return path, body, fmt.Errorf("render slow_operation query %s: %w", k, err)
			}
			q.Set(k, v)
		}
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		path += sep + q.Encode()
	}
	return path, body, nil
}

// setBodyField sets a dotted path (key_field's syntax) of a JSON body to value, a JSON
// string, creating the objects on the way; the body comes back in its compact spelling,
// its members in their order.
func setBodyField(body string, form HookForm, value string) (string, error) {
	v, err := form.FieldValue(value)
	if err != nil {
		return body, err
	}
	out, err := jsonvalue.SetIn(body, form.Field, v)
	if err != nil {
		return body, fmt.Errorf("the body cannot carry %s: %w", form.Field, err)
	}
	return out, nil
}

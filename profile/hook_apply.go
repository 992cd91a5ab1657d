package profile

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// ApplySlowHook puts slow_operation, as declared (its hold), on a request for entity:
// the header set on h, the query added to path, or the path replaced. It returns the
// path to send; without slow_operation the path and h are unchanged.
func (p *Profile) ApplySlowHook(path string, h http.Header, entity string) (string, error) {
	if p.Slow == nil {
		return path, nil
	}
	data := HookData{Entity: entity, HoldMs: p.Slow.HoldDuration().Milliseconds(), Value: p.Slow.Value}
	if p.Slow.Header != "" {
		v, err := RenderHook(p.Slow.Value, data)
		if err != nil {
			return path, fmt.Errorf("render slow_operation value: %w", err)
		}
		h.Set(p.Slow.Header, v)
	}
	if p.Slow.Path != "" {
		v, err := RenderHook(p.Slow.Path, data)
		if err != nil {
			return path, fmt.Errorf("render slow_operation path: %w", err)
		}
		path = v
	}
	if len(p.Slow.Query) > 0 {
		q := url.Values{}
		for _, k := range slices.Sorted(maps.Keys(p.Slow.Query)) {
			v, err := RenderHook(p.Slow.Query[k], data)
			if err != nil {
				return path, fmt.Errorf("render slow_operation query %s: %w", k, err)
			}
			q.Set(k, v)
		}
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		path += sep + q.Encode()
	}
	return path, nil
}

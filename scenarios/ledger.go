package scenarios

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// readLedger counts the side effects for entity with the probe.
func (t *target) readLedger(ctx context.Context, pr Probe, entity string) (int, error) {
	path, err := render(pr.Path, entity)
	if err != nil {
		return 0, fmt.Errorf("render ledger path: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, pr.Method, strings.TrimSuffix(t.ledgerBase(), "/")+path, nil)
	if err != nil {
		return 0, fmt.Errorf("build ledger request: %w", err)
	}
	for k, v := range t.p.Operation.Headers {
		req.Header.Set(k, v)
	}
	if len(t.p.Principals) > 0 {
		for k, v := range t.p.Principals[0] {
			req.Header.Set(k, v)
		}
	}
	for k, v := range pr.Headers {
		req.Header.Set(k, v)
	}
	resp, err := t.probe.Do(req)
	if err != nil {
		return 0, fmt.Errorf("read ledger: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody))
	if err != nil {
		return 0, fmt.Errorf("read ledger: %w", err)
	}
	if !is2xx(resp.StatusCode) {
		return 0, fmt.Errorf("read ledger: %s %s answered %d", pr.Method, path, resp.StatusCode)
	}
	return lookupCount(body, pr.Count)
}

// lookupCount reads a count from a JSON document at a dotted path: a number, or the
// length of an array when the last segment is "#" ("data.#").
func lookupCount(body []byte, path string) (int, error) {
	var doc any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return 0, fmt.Errorf("ledger response is not JSON: %w", err)
	}
	cur := doc
	for _, part := range strings.Split(path, ".") {
		switch c := cur.(type) {
		case []any:
			if part == "#" {
				return len(c), nil
			}
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(c) {
				return 0, fmt.Errorf("count %s: no element %q in an array of %d", path, part, len(c))
			}
			cur = c[i]
		case map[string]any:
			v, ok := c[part]
			if !ok {
				return 0, fmt.Errorf("count %s: no field %q in the ledger response", path, part)
			}
			cur = v
		default:
			return 0, fmt.Errorf("count %s: %q is not inside an object or array", path, part)
		}
	}
	switch c := cur.(type) {
	case json.Number:
		n, err := strconv.Atoi(c.String())
		if err != nil {
			return 0, fmt.Errorf("count %s: %s is not an integer", path, c)
		}
		return n, nil
	case []any:
		return len(c), nil
	}
	return 0, fmt.Errorf("count %s: not a number or an array", path)
}

package clientcheck

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"text/template"

	"github.com/tidwall/gjson"

	"github.com/idemproof/idemproof/scenarios"
)

// maxLedgerBody bounds one ledger answer.
const maxLedgerBody = 10 << 20

// ledgerReader counts the side effects of one entity with the profile's side_effects
// probe, straight at the target (never through the faults): the probe's path rendered
// with {{.Entity}}, the operation's and the first principal's headers, then the probe's
// own, and its count path (gjson: "count", "data.#") into the answer.
type ledgerReader struct {
	p      *scenarios.Profile
	client *http.Client
}

func (l ledgerReader) count(ctx context.Context, entity string) (int, error) {
	pr := l.p.SideEffects
	path, err := renderEntity(pr.Path, entity)
	if err != nil {
		return 0, fmt.Errorf("render side_effects.path: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, pr.Method, strings.TrimSuffix(l.p.BaseURL, "/")+path, nil)
	if err != nil {
		return 0, fmt.Errorf("build ledger request: %w", err)
	}
	for k, v := range l.p.Operation.Headers {
		req.Header.Set(k, v)
	}
	if len(l.p.Principals) > 0 {
		for k, v := range l.p.Principals[0] {
			req.Header.Set(k, v)
		}
	}
	for k, v := range pr.Headers {
		req.Header.Set(k, v)
	}
	resp, err := l.client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("read ledger of %s: %w", entity, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxLedgerBody))
	if err != nil {
		return 0, fmt.Errorf("read ledger of %s: %w", entity, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return 0, fmt.Errorf("read ledger of %s: %s %s answered %d: %s", entity, pr.Method, path, resp.StatusCode, shorten(string(body), 200))
	}
	return countAt(body, pr.Count)
}

// countAt reads the count at a gjson path: a whole number, or the length of an array.
func countAt(body []byte, path string) (int, error) {
	if !gjson.ValidBytes(body) {
		return 0, fmt.Errorf("ledger answer is not JSON: %s", shorten(string(body), 200))
	}
	v := gjson.GetBytes(body, path)
	switch {
	case !v.Exists():
		return 0, fmt.Errorf("side_effects.count %s: not found in the ledger answer %s", path, shorten(string(body), 200))
	case v.IsArray():
		return len(v.Array()), nil
	case v.Type == gjson.Number && v.Num == float64(int(v.Num)) && v.Num >= 0:
		return int(v.Num), nil
	}
	return 0, fmt.Errorf("side_effects.count %s: %s is not a count (a whole number or an array)", path, shorten(v.Raw, 80))
}

// readLedger counts every entity's side effects.
func (l ledgerReader) readLedger(ctx context.Context, entities []string) (map[string]int, error) {
	out := make(map[string]int, len(entities))
	for _, e := range entities {
		n, err := l.count(ctx, e)
		if err != nil {
			return out, err
		}
		out[e] = n
	}
	return out, nil
}

// renderEntity fills a profile template with the entity, as the catalogue's runner does.
func renderEntity(s, entity string) (string, error) {
	if !strings.Contains(s, "{{") {
		return s, nil
	}
	t, err := template.New("").Option("missingkey=error").Parse(s)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := t.Execute(&b, struct{ Entity string }{entity}); err != nil {
		return "", err
	}
	return b.String(), nil
}

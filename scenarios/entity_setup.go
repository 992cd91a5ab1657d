package scenarios

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/idemproof/idemproof/transport"
	"github.com/idemproof/idemproof/transport/contentcoding"
)

// EntitySetup creates the entity a scenario acts on — the order a refund belongs to, the
// charge it refunds — with one request before the scenario's first attempt, for APIs
// whose operation needs a parent that already exists. {{.Entity}} in the operation, the
// ledger and the hooks is then the id its answer names. The request's own templates see
// {{.Entity}} as the runner's fresh name for it (a label, e.g. for a description).
type EntitySetup struct {
	Method  string            `yaml:"method,omitempty" json:"method,omitempty"` // default POST
	Path    string            `yaml:"path" json:"path"`
	Headers map[string]string `yaml:"headers,omitempty" json:"headers,omitempty"`
	Body    string            `yaml:"body,omitempty" json:"body,omitempty"`
	// ID is a gjson path into the answer's body to the created entity's id (id, data.id).
	ID string `yaml:"id" json:"id"`
}

// checkEntitySetup validates entity_setup.
func checkEntitySetup(p *Profile) []fieldError {
	s := p.EntitySetup
	if s == nil {
		return nil
	}
	var errs []fieldError
	add := func(path, format string, args ...any) {
		errs = append(errs, fieldError{Path: "entity_setup" + path, Msg: fmt.Sprintf(format, args...)})
	}
	if p.Transport == TransportMCP {
		add("", "is an HTTP request, and this profile speaks MCP: create the entities another way (a tool the operation's arguments name), or leave entity_setup out")
	}
	if !strings.HasPrefix(s.Path, "/") {
		add(".path", "must be a path on base_url starting with /, such as /v1/charges, got %q", s.Path)
	}
	if s.ID == "" || !validFieldPath(s.ID) || strings.ContainsAny(s.ID, " \t\r\n") {
		add(".id", "must be a JSON path into the answer to the created entity's id, such as id or data.id, got %q", s.ID)
	}
	switch strings.ToUpper(s.Method) {
	case "", http.MethodPost, http.MethodPut, http.MethodPatch:
	default:
		add(".method", "must be POST (the default), PUT or PATCH: a request that creates the entity, got %q", s.Method)
	}
	for _, t := range []struct{ field, tmpl string }{{".path", s.Path}, {".body", s.Body}} {
		if _, err := render(t.tmpl, sampleEntity); err != nil {
			add(t.field, "is not a valid template: %v", err)
		}
	}
	return errs
}

// createEntity returns the entity a scenario (or one of its side entities) acts on: name
// itself without entity_setup, otherwise the id of an entity the setup request created.
// The request goes straight to base_url, like a ledger read: it is not under test.
func (t *target) createEntity(ctx context.Context, name string) (string, error) {
	s := t.p.EntitySetup
	if s == nil {
		return name, nil
	}
	path, err := render(s.Path, name)
	if err != nil {
		return "", fmt.Errorf("entity_setup.path: %w", err)
	}
	body, err := render(s.Body, name)
	if err != nil {
		return "", fmt.Errorf("entity_setup.body: %w", err)
	}
	method := strings.ToUpper(s.Method)
	if method == "" {
		method = http.MethodPost
	}
	deadline := time.Now().Add(transport.ThrottleBudget)
	for {
		answer, status, retryAfter, err := t.setupOnce(ctx, method, strings.TrimSuffix(t.ledgerBase(), "/")+path, body)
		if err == nil && status == http.StatusTooManyRequests {
			wait := transport.ThrottleWait(transport.RetryAfter(retryAfter, time.Now()))
			if time.Now().Add(wait).After(deadline) {
				return "", transport.StillThrottled(fmt.Errorf("entity_setup: %s %s answered %d", method, path, status))
			}
			if !transport.Sleep(ctx, wait) {
				return "", ctx.Err()
			}
			continue
		}
		switch {
		case err != nil:
			return "", fmt.Errorf("entity_setup: %s %s: %w", method, path, err)
		case status < 200 || status > 299:
			return "", fmt.Errorf("entity_setup: %s %s answered %d %s: fix entity_setup (its body, headers or path) so that it creates an entity", method, path, status, clipText(answer))
		}
		id := gjson.GetBytes(answer, s.ID)
		if !id.Exists() || id.IsObject() || id.IsArray() || id.String() == "" {
			return "", fmt.Errorf("entity_setup.id %s: nothing usable at that path in the answer %s: point it at the created entity's id", s.ID, clipText(answer))
		}
		return id.String(), nil
	}
}

// setupOnce sends the setup request once: the decoded answer, its status and its
// Retry-After.
func (t *target) setupOnce(ctx context.Context, method, url, body string) ([]byte, int, string, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		return nil, 0, "", err
	}
	h, err := t.p.requestHeaders(t.p.Operation.Headers, 0, "")
	if err != nil {
		return nil, 0, "", err
	}
	for k, v := range h {
		req.Header[k] = v
	}
	if body != "" && gjson.Valid(body) {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range t.p.EntitySetup.Headers {
		req.Header.Set(k, v)
	}
	resp, err := t.probe.Do(req)
	if err != nil {
		return nil, 0, "", err
	}
	defer resp.Body.Close()
	decoded, err := contentcoding.NewReader(resp.Header.Get("Content-Encoding"), resp.Body)
	if err != nil {
		return nil, 0, "", err
	}
	answer, err := io.ReadAll(io.LimitReader(decoded, transport.MaxResponseBody))
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, 0, "", err
	}
	return answer, resp.StatusCode, resp.Header.Get("Retry-After"), nil
}

// clipText renders an answer for an error message: at most 200 bytes.
func clipText(b []byte) string {
	const limit = 200
	s := strings.TrimSpace(string(b))
	if len(s) > limit {
		return s[:limit] + "…"
	}
	if s == "" {
		return "(empty body)"
	}
	return s
}

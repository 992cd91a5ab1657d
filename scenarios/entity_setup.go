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

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/transport"
	"github.com/idemproof/idemproof/transport/contentcoding"
)

// createEntity returns the entity a scenario (or one of its side entities) acts on: name
// itself without entity_setup, otherwise the id of an entity the setup request created.
// The request goes straight to base_url, like a ledger read: it is not under test.
func (t *target) createEntity(ctx context.Context, name string) (string, error) {
	s := t.p.EntitySetup
	if s == nil {
		return name, nil
	}
	path, err := profile.Render(s.Path, name)
	if err != nil {
		return "", fmt.Errorf("entity_setup.path: %w", err)
	}
	body, err := profile.Render(s.Body, name)
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
	h, err := t.p.RequestHeaders(t.p.Operation.Headers, 0, "")
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

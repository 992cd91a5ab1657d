// Package client is the Go client of the faultproxy admin API. A *Client implements
// faultproxy.Controller, so a test harness drives a proxy in another process (or
// container) exactly as it drives an in-process *faultproxy.Proxy.
//
// Every method is one HTTP request; nothing is cached or retried. Admin errors come back
// as *Error carrying the status and, for a rejected rule, the field at fault.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/idemproof/idemproof/faultproxy"
)

// Client talks to one proxy's admin API.
type Client struct {
	base  string
	token string
	// HTTP is the client used for requests; New sets one with a 30 s timeout.
	HTTP *http.Client
}

var _ faultproxy.Controller = (*Client)(nil)

// New returns a client for the admin API at adminURL (e.g. http://127.0.0.1:8474); token
// is the bearer token, or "" when the proxy requires none.
func New(adminURL, token string) *Client {
	return &Client{
		base:  strings.TrimSuffix(adminURL, "/"),
		token: token,
		HTTP:  &http.Client{Timeout: 30 * time.Second},
	}
}

// Error is an admin API error response.
type Error struct {
	Status int
	Msg    string
	Field  string // the rule field at fault, when the proxy named one
}

func (e *Error) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("faultproxy admin: %d: %s (field %s)", e.Status, e.Msg, e.Field)
	}
	return fmt.Sprintf("faultproxy admin: %d: %s", e.Status, e.Msg)
}

// Is lets errors.Is(err, faultproxy.ErrRuleExists / ErrRuleNotFound) work across the wire.
func (e *Error) Is(target error) bool {
	switch target {
	case faultproxy.ErrRuleExists:
		return e.Status == http.StatusConflict
	case faultproxy.ErrRuleNotFound:
		return e.Status == http.StatusNotFound && e.Field == "name"
	}
	return false
}

// AddRule adds one rule.
func (c *Client) AddRule(ctx context.Context, r faultproxy.Rule) error {
	return c.do(ctx, http.MethodPost, "/rules", r, nil)
}

// DeleteRule removes a rule by name.
func (c *Client) DeleteRule(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodDelete, "/rules/"+url.PathEscape(name), nil, nil)
}

// Reset removes all rules and clears the journal and attempt counters.
func (c *Client) Reset(ctx context.Context) error {
	return c.do(ctx, http.MethodPost, "/reset", nil, nil)
}

// Journal returns the records matching q, in sequence order: every page of them, or at
// most q.Limit when it is set.
func (c *Client) Journal(ctx context.Context, q faultproxy.JournalQuery) ([]faultproxy.Record, error) {
	var out []faultproxy.Record
	for {
		page, err := c.JournalPage(ctx, q)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Records...)
		if !page.More || len(page.Records) == 0 || (q.Limit > 0 && len(out) >= q.Limit) {
			if q.Limit > 0 && len(out) > q.Limit {
				out = out[:q.Limit]
			}
			return out, nil
		}
		q.Since = page.Records[len(page.Records)-1].Seq
	}
}

// JournalPage returns one page of the records matching q (at most q.Limit, or the
// admin API's default of faultproxy.DefaultJournalPage) with the journal's totals and
// drops; page.More says whether more match after it.
func (c *Client) JournalPage(ctx context.Context, q faultproxy.JournalQuery) (*faultproxy.JournalPage, error) {
	v := url.Values{}
	if q.Key != "" {
		v.Set("key", q.Key)
	}
	if q.Since > 0 {
		v.Set("since", strconv.FormatUint(q.Since, 10))
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(min(q.Limit, faultproxy.MaxJournalPage)))
	}
	path := "/journal"
	if len(v) > 0 {
		path += "?" + v.Encode()
	}
	var page faultproxy.JournalPage
	if err := c.do(ctx, http.MethodGet, path, nil, &page); err != nil {
		return nil, err
	}
	return &page, nil
}

// Rules lists the rules in evaluation order with their firing counts.
func (c *Client) Rules(ctx context.Context) ([]faultproxy.RuleStatus, error) {
	var rules []faultproxy.RuleStatus
	err := c.do(ctx, http.MethodGet, "/rules", nil, &rules)
	return rules, err
}

// Health returns nil when the proxy answers /healthz with status ok.
func (c *Client) Health(ctx context.Context) error {
	var h struct {
		Status string `json:"status"`
	}
	if err := c.do(ctx, http.MethodGet, "/healthz", nil, &h); err != nil {
		return err
	}
	if h.Status != "ok" {
		return fmt.Errorf("faultproxy admin: health status %q", h.Status)
	}
	return nil
}

// Version returns the proxy's version.
func (c *Client) Version(ctx context.Context) (string, error) {
	var v struct {
		Version string `json:"version"`
	}
	err := c.do(ctx, http.MethodGet, "/version", nil, &v)
	return v.Version, err
}

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encode %s %s: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return fmt.Errorf("build %s %s: %w", method, path, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return fmt.Errorf("read %s %s: %w", method, path, err)
	}
	if resp.StatusCode >= 300 {
		var ae faultproxy.AdminError
		if json.Unmarshal(b, &ae) != nil || ae.Error == "" {
			ae.Error = strings.TrimSpace(string(b))
		}
		return &Error{Status: resp.StatusCode, Msg: ae.Error, Field: ae.Field}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("decode %s %s: %w", method, path, err)
	}
	return nil
}

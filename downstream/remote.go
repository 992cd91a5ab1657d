package downstream

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Recorder is what a runner needs of a sink: the in-process Sink, or a Remote one (a
// sink in another process, e.g. `idemproof vendor` in a container, reached through its
// admin API).
type Recorder interface {
	AddRule(Rule) error
	RemoveRules(entity string)
	// SettleCalls waits like Sink.Settle, and for at least minCalls calls before it may
	// stop early, and returns the entity's calls; an error means the calls could not be
	// read (a remote sink that does not answer).
	SettleCalls(ctx context.Context, entity string, minCalls int, quiet time.Duration, deadline time.Time) ([]Call, error)
}

// SettleCalls implements Recorder.
func (s *Sink) SettleCalls(ctx context.Context, entity string, minCalls int, quiet time.Duration, deadline time.Time) ([]Call, error) {
	return s.settle(ctx, entity, minCalls, quiet, deadline), nil
}

// Remote is a sink in another process, driven through its admin API (AdminHandler).
type Remote struct {
	base string
	hc   *http.Client
}

// remotePoll is how often a remote sink is read while settling.
const remotePoll = 50 * time.Millisecond

// NewRemote returns the sink whose admin API is at adminURL.
func NewRemote(adminURL string) *Remote {
	return &Remote{base: strings.TrimRight(adminURL, "/"), hc: &http.Client{Timeout: 10 * time.Second}}
}

// AddRule implements Recorder.
func (r *Remote) AddRule(rule Rule) error {
	b, _ := json.Marshal(rule)
	resp, err := r.hc.Post(r.base+"/rules", "application/json", strings.NewReader(string(b)))
	if err != nil {
		return fmt.Errorf("downstream sink %s: add rule: %w", r.base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		var e struct {
			Error string `json:"error"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&e)
		return fmt.Errorf("downstream sink %s: add rule: %s %s", r.base, resp.Status, e.Error)
	}
	return nil
}

// RemoveRules implements Recorder (best effort: a rule left behind only ever matches
// its own entity).
func (r *Remote) RemoveRules(entity string) {
	req, err := http.NewRequest(http.MethodDelete, r.base+"/rules?entity="+url.QueryEscape(entity), nil)
	if err != nil {
		return
	}
	if resp, err := r.hc.Do(req); err == nil {
		resp.Body.Close()
	}
}

// Calls reads the entity's calls.
func (r *Remote) Calls(ctx context.Context, entity string) ([]Call, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.base+"/calls?entity="+url.QueryEscape(entity), nil)
	if err != nil {
		return nil, err
	}
	resp, err := r.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("downstream sink %s: read calls: %w", r.base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("downstream sink %s: read calls: %s", r.base, resp.Status)
	}
	var got struct {
		Calls []Call `json:"calls"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		return nil, fmt.Errorf("downstream sink %s: read calls: %w", r.base, err)
	}
	return got.Calls, nil
}

// SettleCalls implements Recorder by polling: it returns once a call took effect, at
// least minCalls came and none came for quiet, or at deadline.
func (r *Remote) SettleCalls(ctx context.Context, entity string, minCalls int, quiet time.Duration, deadline time.Time) ([]Call, error) {
	for {
		calls, err := r.Calls(ctx, entity)
		if err != nil {
			return nil, err
		}
		effect := false
		var last time.Time
		for _, c := range calls {
			effect = effect || c.NewEffect()
			if c.Time.After(last) {
				last = c.Time
			}
		}
		now := time.Now()
		if now.After(deadline) || (effect && len(calls) >= minCalls && now.Sub(last) >= quiet) {
			return calls, nil
		}
		t := time.NewTimer(remotePoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return calls, nil
		case <-t.C:
		}
	}
}

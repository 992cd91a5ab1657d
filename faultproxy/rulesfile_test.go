package faultproxy_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/idemproof/idemproof/faultproxy"
)

func TestReadRulesFile(t *testing.T) {
	rules, err := faultproxy.ReadRulesFile("testdata/rules.yaml")
	require.NoError(t, err)
	require.Len(t, rules, 3)
	require.Equal(t, "lose-first-refund", rules[0].Name)
	require.Equal(t, &faultproxy.Range{From: 1, To: 1}, rules[0].Match.Attempts)
	require.Equal(t, 503, rules[0].Fault.Status)
	require.Equal(t, 1500*time.Millisecond, rules[1].Fault.Duration)
	require.Equal(t, faultproxy.ThenDrop, rules[1].Fault.Then)
	require.Equal(t, 2, rules[1].Count)
	require.Equal(t, 0.25, rules[2].Probability)

	// The rules load into a proxy as they are.
	_, err = faultproxy.New(faultproxy.Config{Upstream: "http://127.0.0.1:1", Rules: rules})
	require.NoError(t, err)
}

func TestFaultSpecDurationAtTheEdge(t *testing.T) {
	spec := faultproxy.FaultSpec{Type: faultproxy.FaultAfterHold, Duration: 2500 * time.Millisecond}
	b, err := json.Marshal(spec)
	require.NoError(t, err)
	require.JSONEq(t, `{"type":"after-hold","duration_ms":2500}`, string(b))
	var back faultproxy.FaultSpec
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, spec, back)

	y, err := yaml.Marshal(spec)
	require.NoError(t, err)
	require.Contains(t, string(y), "duration_ms: 2500")
	var backY faultproxy.FaultSpec
	require.NoError(t, yaml.Unmarshal(y, &backY))
	require.Equal(t, spec, backY)

	require.Error(t, json.Unmarshal([]byte(`{"type":"after-hold","duration":"2s"}`), &back), "unknown fields are refused")
}

func TestBadRulesNameIndexAndField(t *testing.T) {
	cases := []struct {
		name, yaml, field, index string
	}{
		{"no name", `[{fault: {type: after-reset}}]`, "name", "rule 0"},
		{"bad status", `[{name: a, fault: {type: after-reset}}, {name: b, fault: {type: after-status, status: 99}}]`, "fault.status", "rule 1"},
		{"unknown type", `[{name: a, fault: {type: explode}}]`, "fault.type", "rule 0"},
		{"missing type", `[{name: a, fault: {}}]`, "fault.type", "rule 0"},
		{"misplaced param", `[{name: a, fault: {type: after-reset, bytes: 3}}]`, "fault.bytes", "rule 0"},
		{"hold without duration", `[{name: a, fault: {type: after-hold}}]`, "fault.duration_ms", "rule 0"},
		{"bad then", `[{name: a, fault: {type: after-hold, duration_ms: 5, then: later}}]`, "fault.then", "rule 0"},
		{"bad mode", `[{name: a, fault: {type: duplicate, mode: twice}}]`, "fault.mode", "rule 0"},
		{"negative bytes", `[{name: a, fault: {type: after-truncate, bytes: -1}}]`, "fault.bytes", "rule 0"},
		{"attempts from 0", `[{name: a, match: {attempts: {from: 0}}, fault: {type: after-reset}}]`, "match.attempts.from", "rule 0"},
		{"attempts to < from", `[{name: a, match: {attempts: {from: 3, to: 2}}, fault: {type: after-reset}}]`, "match.attempts.to", "rule 0"},
		{"bad path glob", `[{name: a, match: {path: "/v1/["}, fault: {type: after-reset}}]`, "match.path", "rule 0"},
		{"key and no_key", `[{name: a, match: {key: "*", no_key: true}, fault: {type: after-reset}}]`, "match.no_key", "rule 0"},
		{"probability", `[{name: a, probability: 1.5, fault: {type: after-reset}}]`, "probability", "rule 0"},
		{"count", `[{name: a, count: -1, fault: {type: after-reset}}]`, "count", "rule 0"},
		{"duplicate names", `[{name: a, fault: {type: after-reset}}, {name: a, fault: {type: after-close}}]`, "name", "rule 1"},
		{"bad method", `[{name: a, match: {method: "GE T"}, fault: {type: after-reset}}]`, "match.method", "rule 0"},
		{"negative duration", `[{name: a, fault: {type: after-delay, duration_ms: -5}}]`, "fault.duration_ms", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := faultproxy.ParseRulesYAML([]byte(tc.yaml))
			require.Error(t, err)
			var re *faultproxy.RuleError
			require.True(t, errors.As(err, &re), "want *RuleError, got %T %v", err, err)
			require.Equal(t, tc.field, re.Field, "error: %v", err)
			require.Contains(t, err.Error(), tc.index)
		})
	}
}

func TestUnknownYAMLFieldIsRefused(t *testing.T) {
	_, err := faultproxy.ParseRulesYAML([]byte(`[{name: a, mtach: {}, fault: {type: after-reset}}]`))
	require.ErrorContains(t, err, "mtach")
}

func TestAddRuleNamesTheField(t *testing.T) {
	p, err := faultproxy.New(faultproxy.Config{Upstream: "http://127.0.0.1:1"})
	require.NoError(t, err)
	err = p.AddRule(t.Context(), faultproxy.Rule{Name: "x", Fault: faultproxy.FaultSpec{Type: faultproxy.FaultBeforeStatus, Status: 700}})
	var re *faultproxy.RuleError
	require.ErrorAs(t, err, &re)
	require.Equal(t, "fault.status", re.Field)
	require.NoError(t, p.AddRule(t.Context(), faultproxy.Rule{Name: "x", Fault: faultproxy.FaultSpec{Type: faultproxy.FaultBeforeReset}}))
	err = p.AddRule(t.Context(), faultproxy.Rule{Name: "x", Fault: faultproxy.FaultSpec{Type: faultproxy.FaultBeforeReset}})
	require.ErrorIs(t, err, faultproxy.ErrRuleExists)
}

func TestNewRefusesBadUpstream(t *testing.T) {
	for _, u := range []string{"", "ftp://x", "127.0.0.1:8080", "http://", "http://h/?q=1"} {
		_, err := faultproxy.New(faultproxy.Config{Upstream: u})
		require.Error(t, err, "upstream %q", u)
	}
}

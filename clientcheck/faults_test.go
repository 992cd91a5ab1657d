package clientcheck_test

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/clientcheck"
	"github.com/idemproof/idemproof/faultproxy"
)

func ruleNames(rules []faultproxy.Rule) []string {
	var out []string
	for _, r := range rules {
		out = append(out, r.Name)
	}
	return out
}

func TestDefaultScheduleHoldsOneResetsSomeAnd503sTheRest(t *testing.T) {
	rules, err := clientcheck.ParseFaults("")
	require.NoError(t, err)
	require.Equal(t, []string{"client-check-hold", "client-check-reset", "client-check-503"}, ruleNames(rules))
	hold := rules[0]
	require.Equal(t, faultproxy.FaultAfterHold, hold.Fault.Type)
	require.Equal(t, 3*time.Second, hold.Fault.Duration)
	require.Equal(t, "drop", hold.Fault.Then)
	require.Equal(t, 1, hold.Count)
	require.Equal(t, 0.5, rules[1].Probability)
	for _, r := range rules {
		require.Equal(t, &faultproxy.Range{From: 1, To: 1}, r.Match.Attempts, r.Name)
		require.Equal(t, "/v1/refunds", r.Match.Path)
	}
	require.Equal(t, 503, rules[2].Fault.Status)
}

func TestFaultSpecOrderIsPrecedenceNotWriting(t *testing.T) {
	rules, err := clientcheck.ParseFaults("502, 409=2, hold=500ms")
	require.NoError(t, err)
	require.Equal(t, []string{"client-check-hold", "client-check-409", "client-check-502"}, ruleNames(rules))
	require.Equal(t, 2, rules[1].Fault.RetryAfter)
	require.Equal(t, 500*time.Millisecond, rules[0].Fault.Duration)
}

func TestFaultSpecNone(t *testing.T) {
	rules, err := clientcheck.ParseFaults("none")
	require.NoError(t, err)
	require.Empty(t, rules)
}

func TestFaultSpecErrorsSayWhatToFix(t *testing.T) {
	for spec, want := range map[string]string{
		"teapot":    "unknown fault; use hold, reset",
		"reset=2":   "want a probability in (0,1]",
		"hold=soon": "want a positive duration",
		"422=1":     "takes no parameter",
		"503,503":   "given twice",
		"none,503":  "cannot be combined",
		"@/no/file": "read faults file",
		"409=-1":    "want whole seconds",
	} {
		_, err := clientcheck.ParseFaults(spec)
		require.ErrorContains(t, err, want, spec)
	}
}

func TestFaultSpecFromFile(t *testing.T) {
	path := t.TempDir() + "/rules.json"
	require.NoError(t, os.WriteFile(path, []byte(`[{"name":"slow","match":{"method":"POST"},"fault":{"type":"after-hold","duration_ms":250,"then":"drop"}}]`), 0o644))
	rules, err := clientcheck.ParseFaults("@" + path)
	require.NoError(t, err)
	require.Len(t, rules, 1)
	require.Equal(t, 250*time.Millisecond, rules[0].Fault.Duration)
}

package clientcheck_test

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/clientcheck"
)

func kindNames(s *clientcheck.Schedule) []string {
	var out []string
	for _, k := range s.Kinds {
		out = append(out, k.String())
	}
	return out
}

func TestDefaultScheduleHoldsOneAndResetsOr503sTheOthers(t *testing.T) {
	s, err := clientcheck.ParseSchedule("")
	require.NoError(t, err)
	require.Equal(t, []string{"hold", "reset", "503"}, kindNames(s))
	require.Equal(t, clientcheck.DefaultFaultSpec, s.String())
	hold := s.Kinds[0]
	require.True(t, hold.Once)
	require.Zero(t, hold.Hold, "held until the client gives up: client_patience, within half the retention")
	require.Zero(t, s.Kinds[2].RetryAfter, "a plain 503 says no Retry-After")
	require.Equal(t, 1.0, s.Kinds[1].Probability)
}

func TestFaultSpecOrderIsPrecedenceNotWriting(t *testing.T) {
	s, err := clientcheck.ParseSchedule("502, 409=2, hold=500ms, reset=0.25")
	require.NoError(t, err)
	require.Equal(t, []string{"hold=500ms", "reset=0.25", "409=2", "502"}, kindNames(s))
	require.Equal(t, 2, s.Kinds[2].RetryAfter)
	require.Equal(t, 500*time.Millisecond, s.Kinds[0].Hold)
	require.Equal(t, 0.25, s.Kinds[1].Probability)
	require.Equal(t, "client-check-409", s.Kinds[2].RuleName())
}

func TestFaultSpecNone(t *testing.T) {
	s, err := clientcheck.ParseSchedule("none")
	require.NoError(t, err)
	require.Empty(t, s.Kinds)
	require.Empty(t, s.Rules)
	require.Equal(t, "none", s.String())
}

func TestFaultSpecErrorsSayWhatToFix(t *testing.T) {
	for spec, want := range map[string]string{
		"teapot":            "unknown fault; use hold, reset",
		"reset=2":           "want a probability in (0,1]",
		"hold=soon":         "want a positive duration",
		"422=1":             "takes no parameter",
		"503,503":           "given twice",
		"none,503":          "cannot be combined",
		"@/no/file":         "read faults file",
		"409=-1":            "want whole seconds of Retry-After, e.g. 409=1, or 409=0 for none",
		"429=soon":          "want whole seconds of Retry-After, e.g. 429=1",
		"503=1.5":           "want whole seconds of Retry-After, e.g. 503=1",
		"502=1":             "takes no parameter",
		"should-retry":      "write should-retry=false",
		"should-retry=true": "write should-retry=false",
	} {
		_, err := clientcheck.ParseSchedule(spec)
		require.ErrorContains(t, err, want, spec)
	}
}

// 409=0 answers the in-flight refusal without Retry-After, as an API that sends none.
func TestThe409KindWithoutRetryAfter(t *testing.T) {
	s, err := clientcheck.ParseSchedule("409=0")
	require.NoError(t, err)
	require.Zero(t, s.Kinds[0].RetryAfter)
	require.Equal(t, "409=0", s.String())
}

// The kinds that carry retry signals: 429 and 503 with their Retry-After, and the
// x-should-retry family.
func TestRetrySignalKinds(t *testing.T) {
	s, err := clientcheck.ParseSchedule("429, 503=3, should-retry=false")
	require.NoError(t, err)
	require.Equal(t, []string{"429", "503=3", "should-retry=false"}, kindNames(s))
	require.Equal(t, 1, s.Kinds[0].RetryAfter, "429 says Retry-After: 1 unless told")
	require.Equal(t, 3, s.Kinds[1].RetryAfter)
	s, err = clientcheck.ParseSchedule("429=0")
	require.NoError(t, err)
	require.Zero(t, s.Kinds[0].RetryAfter)
}

func TestFaultSpecFromFile(t *testing.T) {
	path := t.TempDir() + "/rules.json"
	require.NoError(t, os.WriteFile(path, []byte(`[{"name":"slow","match":{"method":"POST"},"fault":{"type":"after-hold","duration_ms":250,"then":"drop"}}]`), 0o644))
	s, err := clientcheck.ParseSchedule("@" + path)
	require.NoError(t, err)
	require.Empty(t, s.Kinds)
	require.Len(t, s.Rules, 1)
	require.Equal(t, 250*time.Millisecond, s.Rules[0].Fault.Duration)
}

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
	require.Equal(t, []string{"hold=3s", "reset", "503"}, kindNames(s))
	require.Equal(t, clientcheck.DefaultFaultSpec, s.String())
	hold := s.Kinds[0]
	require.True(t, hold.Once)
	require.Equal(t, 3*time.Second, hold.Hold)
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
		"teapot":    "unknown fault; use hold, reset",
		"reset=2":   "want a probability in (0,1]",
		"hold=soon": "want a positive duration",
		"422=1":     "takes no parameter",
		"503,503":   "given twice",
		"none,503":  "cannot be combined",
		"@/no/file": "read faults file",
		"409=-1":    "want whole seconds of Retry-After, e.g. 409=1, or 409=0 for none",
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

func TestFaultSpecFromFile(t *testing.T) {
	path := t.TempDir() + "/rules.json"
	require.NoError(t, os.WriteFile(path, []byte(`[{"name":"slow","match":{"method":"POST"},"fault":{"type":"after-hold","duration_ms":250,"then":"drop"}}]`), 0o644))
	s, err := clientcheck.ParseSchedule("@" + path)
	require.NoError(t, err)
	require.Empty(t, s.Kinds)
	require.Len(t, s.Rules, 1)
	require.Equal(t, 250*time.Millisecond, s.Rules[0].Fault.Duration)
}

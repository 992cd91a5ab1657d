package idempotency_test

import (
	"strings"
	"testing"

	"github.com/idemproof/idemproof/reference/idempotency"
	"github.com/stretchr/testify/require"
)

func TestParseKey(t *testing.T) {
	valid := map[string]string{
		"abc":                                "abc",
		`"abc"`:                              "abc",
		`"a\"b\\c"`:                          `a"b\c`,
		"with space ~":                       "with space ~",
		strings.Repeat("k", 255):             strings.Repeat("k", 255),
		`"` + strings.Repeat("q", 255) + `"`: strings.Repeat("q", 255),
	}
	for in, want := range valid {
		got, err := idempotency.ParseKey([]string{in})
		require.NoError(t, err, "key %q", in)
		require.Equal(t, want, got)
	}
	invalid := []string{"", `""`, strings.Repeat("k", 256), "a\tb", "a\x01b", "caf\xc3\xa9", "a\x7fb", `"a\nb"`, `"a"b"`}
	for _, in := range invalid {
		_, err := idempotency.ParseKey([]string{in})
		require.Error(t, err, "key %q", in)
	}
	_, err := idempotency.ParseKey(nil)
	require.ErrorIs(t, err, idempotency.ErrNoKey)
	_, err = idempotency.ParseKey([]string{"a", "b"})
	require.Error(t, err)
}

package main_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Every numeric flag of proxy and serve is checked before anything starts: a clear
// error and exit status 2, never a crash (--journal-capacity 9223372036854775807 used to
// panic in makeslice, 4000000000 ran out of memory).
func TestProxyAndServeRefuseBadNumbers(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1", "--journal-capacity", "9223372036854775807"}, "--journal-capacity must be 1 to 10000000"},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1", "--journal-capacity", "4000000000"}, "--journal-capacity must be 1 to 10000000"},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1", "--journal-capacity", "0"}, "--journal-capacity must be 1 to"},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1", "--journal-bytes", "10"}, "--journal-bytes must be at least 65536"},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1", "--buffer-limit", "-1"}, "--buffer-limit must be 1 to"},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1", "--attempt-key-bytes", "1"}, "--attempt-key-bytes must be at least"},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1", "--body-timeout", "0s"}, "--body-timeout must be a positive duration"},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1", "--admin-token", "a", "--admin-token-file", "f"}, "not both"},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1", "--admin-token-file", "/nonexistent/token"}, "--admin-token-file"},
		{[]string{"serve", "--idle-timeout", "-1s"}, "must be positive durations"},
	} {
		_, stderr, code := runCLI(t, c.args...)
		require.Equal(t, 2, code, "%v: %s", c.args, stderr)
		require.Contains(t, stderr, c.want, c.args)
		require.NotContains(t, stderr, "panic")
	}
}

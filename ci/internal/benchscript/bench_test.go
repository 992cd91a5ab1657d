// Package benchscript_test keeps ci/bench, the script that measures the reference
// server's throughput goals, working: its summary of benchmark output, and one short run.
// It asserts what the script reports, never how fast anything was.
package benchscript_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// bench runs ci/bench with args and returns the lines it printed on stdout.
func bench(t *testing.T, stdin string, env []string, args ...string) []string {
	t.Helper()
	path, err := filepath.Abs("../../bench")
	require.NoError(t, err)
	cmd := exec.Command(path, args...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	require.NoError(t, err, "%s", out)
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// A container's log line can split a result from its benchmark's name; each name's runs
// are summarised as the median and range of "ratio", judged against the goal.
func TestSummariseJoinsSplitLinesAndJudgesTheMedian(t *testing.T) {
	out := "" +
		"BenchmarkRefundPostgresRatio/tcp-2   \t2026/11/30 23:20:11 Creating container for image x\n" +
		"   10000\t       285.2 keyed-µs/req\t         0.41 median-ratio\t         0.45 ratio\t       117.7 unkeyed-µs/req\n" +
		"BenchmarkRefundPostgresRatio/tcp-2   \t   10000\t 200 keyed-µs/req\t 0.5 median-ratio\t 0.52 ratio\t 100 unkeyed-µs/req\n" +
		"BenchmarkRefundPostgresRatio/tcp-2   \t   10000\t 200 keyed-µs/req\t 0.5 median-ratio\t 0.51 ratio\t 100 unkeyed-µs/req\n" +
		"BenchmarkRefundPostgresRatioHTTP/socket-2 \t 10000\t 200 keyed-µs/req\t 0.4 median-ratio\t 0.40 ratio\t 80 unkeyed-µs/req\n" +
		"ok  \tgithub.com/idemproof/idemproof/reference/pgstore\t84.9s\n"
	lines := bench(t, out, nil, "--summarise", "0.5")
	require.Len(t, lines, 2, "%q", lines)
	require.Contains(t, lines[0], "BenchmarkRefundPostgresRatio/tcp ")
	require.Contains(t, lines[0], "median 0.51x, range 0.45-0.52x over 3 runs (goal >= 0.5x: met)")
	require.Contains(t, lines[1], "BenchmarkRefundPostgresRatioHTTP/socket ")
	require.Contains(t, lines[1], "median 0.40x, range 0.40-0.40x over 1 runs (goal >= 0.5x: NOT met)")
}

// One short run of the memory benchmarks, as a user starts it: both are summarised.
func TestMemoryRunReportsBothViews(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the reference's benchmarks")
	}
	lines := bench(t, "", []string{"COUNT=1", "MEMORY_N=2000"}, "memory")
	require.Len(t, lines, 2, "%q", lines)
	require.Contains(t, lines[0], "BenchmarkRefundMemoryRatio ")
	require.Contains(t, lines[1], "BenchmarkRefundMemoryRatioHTTP ")
	for _, l := range lines {
		require.Contains(t, l, "over 1 runs (goal >= 0.8x: ")
	}
}

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

// Runs that metered CPU get a second line: each meter's median CPU per request of either
// kind, and with a database meter the ratio its keyed extra alone leaves room for.
func TestSummariseReportsTheCPUSplitAndTheDatabasesRoom(t *testing.T) {
	out := "" +
		"BenchmarkRefundPostgresRatioHTTP/socket-2 \t2026/12/05 08:16:52 Creating container for image x\n" +
		"   10000\t 190 keyed-db-cpu-µs/req\t 240 keyed-go-cpu-µs/req\t 237 keyed-µs/req\t 0.76 median-ratio\t 0.75 ratio\t 120 unkeyed-db-cpu-µs/req\t 200 unkeyed-go-cpu-µs/req\t 178 unkeyed-µs/req\n" +
		"BenchmarkRefundPostgresRatioHTTP/socket-2 \t 10000\t 150 keyed-db-cpu-µs/req\t 200 keyed-go-cpu-µs/req\t 197 keyed-µs/req\t 0.75 median-ratio\t 0.76 ratio\t 100 unkeyed-db-cpu-µs/req\t 170 unkeyed-go-cpu-µs/req\t 149 unkeyed-µs/req\n" +
		"BenchmarkRefundPostgresRatioHTTP/socket-2 \t 10000\t 160 keyed-db-cpu-µs/req\t 210 keyed-go-cpu-µs/req\t 197 keyed-µs/req\t 0.75 median-ratio\t 0.77 ratio\t 110 unkeyed-db-cpu-µs/req\t 180 unkeyed-go-cpu-µs/req\t 149 unkeyed-µs/req\n" +
		"BenchmarkRefundMemoryRatio-2 \t 10000\t 20 keyed-go-cpu-µs/req\t 20 keyed-µs/req\t 0.8 median-ratio\t 0.80 ratio\t 16 unkeyed-go-cpu-µs/req\t 16 unkeyed-µs/req\n"
	lines := bench(t, out, nil, "--summarise", "0.85")
	require.Len(t, lines, 4, "%q", lines)
	require.Contains(t, lines[0], "BenchmarkRefundMemoryRatio ")
	require.Contains(t, lines[0], "median 0.80x")
	require.Contains(t, lines[1], "BenchmarkRefundMemoryRatio ")
	require.Contains(t, lines[1], "CPU µs per request, keyed/unkeyed (medians): go 20/16")
	require.NotContains(t, lines[1], "leaves room", "no database meter, no room to speak of")
	require.Contains(t, lines[2], "BenchmarkRefundPostgresRatioHTTP/socket ")
	require.Contains(t, lines[2], "median 0.76x, range 0.75-0.77x over 3 runs (goal >= 0.85x: NOT met)")
	// Medians: db 160/110, go 210/180; (110+180) / (110+180+50) = 0.85.
	require.Contains(t, lines[3], "BenchmarkRefundPostgresRatioHTTP/socket ")
	require.Contains(t, lines[3], "keyed/unkeyed (medians): db 160/110, go 210/180; the database's keyed extra alone leaves room for 0.85x")
}

// One short run of the memory benchmarks, as a user starts it: both are summarised.
func TestMemoryRunReportsBothViews(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the reference's benchmarks")
	}
	lines := bench(t, "", []string{"COUNT=1", "MEMORY_N=2000"}, "memory")
	require.Len(t, lines, 4, "%q", lines)
	require.Contains(t, lines[0], "BenchmarkRefundMemoryRatio ")
	require.Contains(t, lines[2], "BenchmarkRefundMemoryRatioHTTP ")
	for _, l := range []string{lines[0], lines[2]} {
		require.Contains(t, l, "over 1 runs (goal >= 0.8x: ")
	}
	// Each with where its CPU went: this process's, the only meter on memory.
	for _, l := range []string{lines[1], lines[3]} {
		require.Regexp(t, `CPU µs per request, keyed/unkeyed \(medians\): go \d+/\d+$`, l)
	}
}

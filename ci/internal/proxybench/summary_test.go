package proxybench_test

import (
	"strings"
	"testing"
	"time"

	"github.com/idemproof/idemproof/ci/internal/proxybench"
	"github.com/stretchr/testify/require"
)

// wrkOutput is wrk 4.1's --latency report, as Debian's wrk prints it.
const wrkOutput = `Running 5s test @ http://127.0.0.1:40123/v1/refunds
  2 threads and 32 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     1.02ms  410.17us  12.31ms   79.85%
    Req/Sec    15.92k     1.01k   18.01k    71.00%
  Latency Distribution
     50%  966.00us
     75%    1.20ms
     90%    1.50ms
     99%    2.31ms
  158432 requests in 5.00s, 36.26MB read
  Socket errors: connect 0, read 2, write 0, timeout 1
  Non-2xx or 3xx responses: 4
Requests/sec:  31686.40
Transfer/sec:      7.25MB
`

func TestParseWrkReadsRateCountMedianAndErrors(t *testing.T) {
	w, err := proxybench.ParseWrk(wrkOutput)
	require.NoError(t, err)
	require.Equal(t, int64(158432), w.Requests)
	require.InDelta(t, 31686.40, w.RPS, 1e-9)
	require.Equal(t, 966*time.Microsecond, w.P50)
	require.Equal(t, int64(7), w.Errors, "3 socket errors and 4 non-2xx answers")

	for in, want := range map[string]time.Duration{"1.20ms": 1200 * time.Microsecond, "2.00s": 2 * time.Second, "113.00us": 113 * time.Microsecond, "1.50m": 90 * time.Second} {
		w, err := proxybench.ParseWrk(strings.Replace(wrkOutput, "966.00us", in, 1))
		require.NoError(t, err, in)
		require.Equal(t, want, w.P50, in)
	}
}

func TestParseWrkSaysWhatIsMissing(t *testing.T) {
	_, err := proxybench.ParseWrk("Running 5s test @ http://x\n  Requests/sec: 10\n")
	require.ErrorContains(t, err, `"N requests in"`)
	require.ErrorContains(t, err, "--latency")
	_, err = proxybench.ParseWrk(strings.Replace(wrkOutput, "966.00us", "966.00zz", 1))
	require.ErrorContains(t, err, `wrk latency "966.00zz"`)
}

func sample(target string, conns, round int, rps float64, requests int64, cpu time.Duration) proxybench.Sample {
	return proxybench.Sample{Target: target, Conns: conns, Round: round, CPU: cpu,
		Wrk: proxybench.Wrk{RPS: rps, Requests: requests, P50: 100 * time.Microsecond}}
}

// Ratios pair each round with the baseline's same round: a drift that slows both in
// one round leaves the ratio alone, which a ratio of medians would not.
func TestSummarisePairsRoundsWithTheBaselines(t *testing.T) {
	samples := []proxybench.Sample{
		sample("proxy", 32, 0, 900, 9000, 180*time.Millisecond), sample("toxiproxy", 32, 0, 1000, 10000, 100*time.Millisecond),
		sample("proxy", 32, 1, 450, 4500, 90*time.Millisecond), sample("toxiproxy", 32, 1, 500, 5000, 50*time.Millisecond),
		sample("proxy", 32, 2, 1200, 12000, 240*time.Millisecond), sample("toxiproxy", 32, 2, 1000, 10000, 100*time.Millisecond),
		sample("proxy", 1, 0, 100, 1000, 20*time.Millisecond), sample("toxiproxy", 1, 0, 200, 2000, 20*time.Millisecond),
	}
	rows, err := proxybench.Summarise(samples, "toxiproxy", "reverseproxy")
	require.NoError(t, err)
	require.Len(t, rows, 4)
	require.Equal(t, "proxy", rows[0].Target)
	require.Equal(t, 32, rows[0].Conns)
	require.Equal(t, 3, rows[0].Rounds)
	require.Equal(t, proxybench.Spread{Median: 900, Min: 450, Max: 1200}, rows[0].RPS)
	require.Equal(t, proxybench.Spread{Median: 0.9, Min: 0.9, Max: 1.2}, rows[0].Ratios["toxiproxy"])
	require.NotContains(t, rows[0].Ratios, "reverseproxy", "no samples of that baseline")
	require.InDelta(t, 20, rows[0].CPUus.Median, 1e-9, "µs of CPU per request")
	require.Equal(t, "toxiproxy", rows[1].Target)
	require.Equal(t, proxybench.Spread{Median: 1, Min: 1, Max: 1}, rows[1].Ratios["toxiproxy"])
	require.Equal(t, 1, rows[2].Conns)
	require.Equal(t, 0.5, rows[2].Ratios["toxiproxy"].Median)

	table := proxybench.Table(rows, "toxiproxy", "reverseproxy")
	lines := strings.Split(strings.TrimSpace(table), "\n")
	require.Len(t, lines, 6)
	require.Equal(t, "| target | conns | req/s | p50 µs | CPU µs/req | ÷ toxiproxy | ÷ reverseproxy | errors |", lines[0])
	require.Equal(t, "| proxy | 32 | 900 (450–1200) | 100 (100–100) | 20.0 (20.0–20.0) | 0.90 (0.90–1.20) | – | 0 |", lines[2])

	_, err = proxybench.Summarise(nil)
	require.ErrorContains(t, err, "no samples")
}

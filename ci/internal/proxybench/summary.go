// Package proxybench is the side-by-side proxy benchmark behind `ci/bench proxy`: the
// summary of wrk's output (this file) and the runner that starts the targets and wrk
// (run.go, cmd/proxybench). Every target is measured in the same rounds, interleaved,
// and compared with the baselines round by round (paired ratios), so drift on a shared
// machine lands on both sides of a ratio alike.
package proxybench

import (
	"bufio"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/idemproof/idemproof/ci/internal/benchstat"
)

// Wrk is what one wrk run reported.
type Wrk struct {
	Requests int64         // "N requests in …"
	RPS      float64       // "Requests/sec:"
	P50      time.Duration // the 50% line of --latency
	Errors   int64         // socket errors plus non-2xx/3xx answers
}

// ParseWrk reads the output of `wrk --latency`. A run without a request count, a rate
// or a median latency is an error that quotes what is missing.
func ParseWrk(out string) (Wrk, error) {
	var w Wrk
	var haveReq, haveRPS, haveP50 bool
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) >= 3 && f[1] == "requests" && f[2] == "in":
			n, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return w, fmt.Errorf("wrk request count %q: %w", f[0], err)
			}
			w.Requests, haveReq = n, true
		case len(f) == 2 && f[0] == "Requests/sec:":
			v, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				return w, fmt.Errorf("wrk rate %q: %w", f[1], err)
			}
			w.RPS, haveRPS = v, true
		case len(f) == 2 && f[0] == "50%":
			d, err := parseWrkDuration(f[1])
			if err != nil {
				return w, err
			}
			w.P50, haveP50 = d, true
		case len(f) >= 2 && f[0] == "Socket" && f[1] == "errors:":
			// "Socket errors: connect 0, read 0, write 0, timeout 0"
			for i := 2; i+1 < len(f); i += 2 {
				n, err := strconv.ParseInt(strings.TrimSuffix(f[i+1], ","), 10, 64)
				if err != nil {
					return w, fmt.Errorf("wrk socket errors %q: %w", sc.Text(), err)
				}
				w.Errors += n
			}
		case len(f) == 5 && f[0] == "Non-2xx":
			n, err := strconv.ParseInt(f[4], 10, 64)
			if err != nil {
				return w, fmt.Errorf("wrk non-2xx count %q: %w", f[4], err)
			}
			w.Errors += n
		}
	}
	var missing []string
	if !haveReq {
		missing = append(missing, `"N requests in"`)
	}
	if !haveRPS {
		missing = append(missing, `"Requests/sec:"`)
	}
	if !haveP50 {
		missing = append(missing, `the "50%" latency line (run wrk with --latency)`)
	}
	if len(missing) > 0 {
		return w, fmt.Errorf("wrk output lacks %s", strings.Join(missing, ", "))
	}
	return w, nil
}

// parseWrkDuration reads wrk's latency spelling: 113.00us, 1.20ms, 2.00s, 1.00m.
func parseWrkDuration(s string) (time.Duration, error) {
	for _, u := range []struct {
		suffix string
		unit   time.Duration
	}{{"us", time.Microsecond}, {"ms", time.Millisecond}, {"ns", time.Nanosecond}, {"s", time.Second}, {"m", time.Minute}, {"h", time.Hour}} {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			v, err := strconv.ParseFloat(num, 64)
			if err != nil {
				break
			}
			return time.Duration(v * float64(u.unit)), nil
		}
	}
	return 0, fmt.Errorf("wrk latency %q: want a number with us, ms, s or m", s)
}

// Sample is one target's run in one round.
type Sample struct {
	Target string
	Conns  int
	Round  int
	Wrk    Wrk
	CPU    time.Duration // the target's processes' CPU time over the run
}

// CPUPerRequest is the target's CPU time per request of the run.
func (s Sample) CPUPerRequest() time.Duration {
	if s.Wrk.Requests == 0 {
		return 0
	}
	return s.CPU / time.Duration(s.Wrk.Requests)
}

// Spread is the median and the range of a quantity over the rounds.
type Spread = benchstat.Spread

// Row is one target at one connection count, over all rounds.
type Row struct {
	Target string
	Conns  int
	Rounds int
	RPS    Spread
	P50us  Spread
	CPUus  Spread // µs of CPU per request
	Errors int64
	// Ratios are the paired per-round throughput ratios target ÷ baseline, by baseline;
	// a baseline's round without a sample of its own leaves that round out.
	Ratios map[string]Spread
}

// Summarise groups samples by target and connection count (in the order targets
// first appear) and pairs each round's throughput with each baseline's in that round.
func Summarise(samples []Sample, baselines ...string) ([]Row, error) {
	type group struct {
		target string
		conns  int
	}
	var order []group
	by := map[group][]Sample{}
	rps := map[group]map[int]float64{} // round -> req/s
	for _, s := range samples {
		g := group{s.Target, s.Conns}
		if _, ok := by[g]; !ok {
			order = append(order, g)
			rps[g] = map[int]float64{}
		}
		by[g] = append(by[g], s)
		rps[g][s.Round] = s.Wrk.RPS
	}
	if len(order) == 0 {
		return nil, errors.New("no samples to summarise")
	}
	rows := make([]Row, 0, len(order))
	for _, g := range order {
		var r, p, c []float64
		row := Row{Target: g.target, Conns: g.conns, Rounds: len(by[g]), Ratios: map[string]Spread{}}
		for _, s := range by[g] {
			r = append(r, s.Wrk.RPS)
			p = append(p, float64(s.Wrk.P50)/float64(time.Microsecond))
			c = append(c, float64(s.CPU)/float64(time.Microsecond)/float64(max(s.Wrk.Requests, 1)))
			row.Errors += s.Wrk.Errors
		}
		row.RPS, row.P50us, row.CPUus = benchstat.Of(r), benchstat.Of(p), benchstat.Of(c)
		for _, base := range baselines {
			bs, ok := rps[group{base, g.conns}]
			if !ok {
				continue
			}
			var ratios []float64
			for _, s := range by[g] {
				if b, ok := bs[s.Round]; ok && b > 0 {
					ratios = append(ratios, s.Wrk.RPS/b)
				}
			}
			if len(ratios) > 0 {
				row.Ratios[base] = benchstat.Of(ratios)
			}
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// Table renders rows as a Markdown table: medians with the range in parentheses.
func Table(rows []Row, baselines ...string) string {
	var b strings.Builder
	b.WriteString("| target | conns | req/s | p50 µs | CPU µs/req |")
	for _, base := range baselines {
		fmt.Fprintf(&b, " ÷ %s |", base)
	}
	b.WriteString(" errors |\n|---|---|---|---|---|")
	for range baselines {
		b.WriteString("---|")
	}
	b.WriteString("---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %d | %.0f (%.0f–%.0f) | %.0f (%.0f–%.0f) | %.1f (%.1f–%.1f) |", r.Target, r.Conns,
			r.RPS.Median, r.RPS.Min, r.RPS.Max, r.P50us.Median, r.P50us.Min, r.P50us.Max,
			r.CPUus.Median, r.CPUus.Min, r.CPUus.Max)
		for _, base := range baselines {
			if s, ok := r.Ratios[base]; ok {
				fmt.Fprintf(&b, " %.2f (%.2f–%.2f) |", s.Median, s.Min, s.Max)
			} else {
				b.WriteString(" – |")
			}
		}
		fmt.Fprintf(&b, " %d |\n", r.Errors)
	}
	return b.String()
}

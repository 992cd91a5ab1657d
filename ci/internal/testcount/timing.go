package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// slowestShown is how many packages the timing summary lists: enough to see where a
// run's time goes and what grew, few enough to read at a glance.
const slowestShown = 10

// pkgTime is one package's test time as go test reported it (its binary's run, not
// its build).
type pkgTime struct {
	name    string
	elapsed time.Duration
	// startedAfter is when its binary started, from the start of the test phase (0:
	// not known): a slow package that starts late is the run's critical path.
	startedAfter time.Duration
}

// phase is one step of ci/test and how long it took.
type phase struct {
	name     string
	duration time.Duration
}

// readPhases reads ci/test's phase timings: one "name seconds" line each, in order. A
// missing file is no phases (testcount run by hand).
func readPhases(path string) []phase {
	if path == "" {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	return parsePhases(f)
}

func parsePhases(r io.Reader) []phase {
	var out []phase
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		name, secs, ok := strings.Cut(strings.TrimSpace(sc.Text()), " ")
		if !ok {
			continue
		}
		s, err := strconv.ParseFloat(strings.TrimSpace(secs), 64)
		if err != nil {
			continue
		}
		out = append(out, phase{name, time.Duration(s * float64(time.Second))})
	}
	return out
}

// writeTiming prints the slowest packages (module prefix trimmed) and the time of each
// phase, the tests' own phase last, so that growth shows in every run's log.
func writeTiming(w io.Writer, module string, times []pkgTime, phases []phase, tests time.Duration) {
	sorted := append([]pkgTime(nil), times...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].elapsed > sorted[j].elapsed })
	if len(sorted) > slowestShown {
		sorted = sorted[:slowestShown]
	}
	if len(sorted) > 0 {
		fmt.Fprintf(w, "\nslowest packages (test time, of %d):\n", len(times))
		for _, p := range sorted {
			name := strings.TrimPrefix(strings.TrimPrefix(p.name, module), "/")
			if name == "" {
				name = p.name
			}
			if p.startedAfter > 0 {
				fmt.Fprintf(w, "  %7.1fs  %-28s (from +%s)\n", p.elapsed.Seconds(), name, round(p.startedAfter))
			} else {
				fmt.Fprintf(w, "  %7.1fs  %s\n", p.elapsed.Seconds(), name)
			}
		}
	}
	parts := make([]string, 0, len(phases)+1)
	for _, ph := range phases {
		parts = append(parts, fmt.Sprintf("%s %s", ph.name, round(ph.duration)))
	}
	if tests > 0 {
		parts = append(parts, fmt.Sprintf("tests %s", round(tests)))
	}
	if len(parts) > 0 {
		fmt.Fprintf(w, "phases: %s\n", strings.Join(parts, ", "))
	}
}

func round(d time.Duration) time.Duration {
	if d >= 10*time.Second {
		return d.Round(time.Second)
	}
	return d.Round(100 * time.Millisecond)
}

// Command testcount reads `go test -json` on stdin, prints a readable log, and ends with
// the line CI reads: "N passed, N failed, N skipped". It counts leaf Go tests plus the
// Ginkgo specs each suite saved through internal/specreport (a suite's bootstrap Go test
// is replaced by its specs). A package that failed without a failing test (a build
// error, a panic, a timeout) counts as one failure so it cannot vanish. Exit status 1
// when anything failed. Before that line it prints the ten slowest packages and the time
// of each phase of ci/test (-phases), so that a run's growth is seen when it happens.
//
//	go test -json ./... | go run ./ci/internal/testcount -specs DIR
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64 // seconds, on a test's or a package's pass / fail / skip
	Time    time.Time
}

type specCounts struct {
	SuitePath   string   `json:"suite_path"`
	Passed      int      `json:"passed"`
	Failed      int      `json:"failed"`
	Skipped     int      `json:"skipped"`
	FailedSpecs []string `json:"failed_specs"`
}

type pkgResult struct {
	tests      map[string]string // test name -> last action (pass/fail/skip)
	failed     bool              // package-level fail
	failedTest bool
}

func main() {
	specDir := flag.String("specs", "", "folder of Ginkgo spec counts written by internal/specreport")
	module := flag.String("module", "", "module path (read from go.mod when empty)")
	root := flag.String("root", ".", "module root folder")
	failedBefore := flag.Int("failed-before", 0, "failures of earlier steps (gofmt, vet, images) to add to the count")
	phasesFile := flag.String("phases", "", `ci/test's phase timings ("name seconds" a line), printed with the slowest packages`)
	flag.Parse()
	started := time.Now()
	var times []pkgTime
	if *module == "" {
		*module = readModule(filepath.Join(*root, "go.mod"))
	}
	pkgs := map[string]*pkgResult{}
	var order []string
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1024*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		var ev event
		if json.Unmarshal(line, &ev) != nil || ev.Action == "" {
			fmt.Println(string(line)) // not test2json: a build error line, for example
			continue
		}
		p := pkgs[ev.Package]
		if p == nil {
			p = &pkgResult{tests: map[string]string{}}
			pkgs[ev.Package] = p
			order = append(order, ev.Package)
		}
		switch ev.Action {
		case "output":
			if show(ev.Output) {
				fmt.Print(ev.Output)
			}
		case "pass", "fail", "skip":
			if ev.Test != "" {
				p.tests[ev.Test] = ev.Action
				if ev.Action == "fail" {
					p.failedTest = true
				}
			} else {
				elapsed := time.Duration(ev.Elapsed * float64(time.Second))
				pt := pkgTime{name: ev.Package, elapsed: elapsed}
				if !ev.Time.IsZero() && elapsed > 0 {
					pt.startedAfter = ev.Time.Add(-elapsed).Sub(started)
				}
				times = append(times, pt)
				if ev.Action == "fail" {
					p.failed = true
				}
			}
		}
	}
	suites := readSpecs(*specDir)
	var passed, skipped int
	failed := *failedBefore
	var failures, skips []string
	if failed > 0 {
		failures = append(failures, fmt.Sprintf("%d step(s) before the tests failed (see above)", failed))
	}
	for _, name := range order {
		p := pkgs[name]
		dir, _ := filepath.Abs(filepath.Join(*root, strings.TrimPrefix(strings.TrimPrefix(name, *module), "/")))
		if s, ok := suites[dir]; ok {
			passed += s.Passed
			failed += s.Failed
			skipped += s.Skipped
			if s.Skipped > 0 {
				skips = append(skips, fmt.Sprintf("%s: %d spec(s)", name, s.Skipped))
			}
			for _, f := range s.FailedSpecs {
				failures = append(failures, name+": "+f)
			}
			if p.failed && s.Failed == 0 {
				failed++ // the suite passed its specs but the package still failed (e.g. a leak, a timeout)
				failures = append(failures, name+": package failed outside its specs")
			}
			continue
		}
		for test, action := range p.tests {
			if hasChildren(p.tests, test) {
				continue
			}
			switch action {
			case "pass":
				passed++
			case "fail":
				failed++
				failures = append(failures, name+": "+test)
			case "skip":
				skipped++
				skips = append(skips, name+": "+test)
			}
		}
		if p.failed && !p.failedTest {
			failed++
			failures = append(failures, name+": package failed (build error, panic or timeout)")
		}
	}
	sort.Strings(skips)
	if len(skips) > 0 {
		// Under CI=true no suite may skip for a missing engine or image: the names make a
		// skip that should not be there visible in every run's log.
		fmt.Println("\nskipped:")
		for _, s := range skips {
			fmt.Println("  " + s)
		}
	}
	sort.Strings(failures)
	if len(failures) > 0 {
		fmt.Println("\nFAILED:")
		for _, f := range failures {
			fmt.Println("  " + f)
		}
	}
	writeTiming(os.Stdout, *module, times, readPhases(*phasesFile), time.Since(started))
	fmt.Printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped)
	if failed > 0 {
		os.Exit(1)
	}
}

// show hides the per-test chatter of -json mode; failures, logs and summaries stay.
func show(out string) bool {
	t := strings.TrimSpace(out)
	for _, p := range []string{"=== RUN", "=== PAUSE", "=== CONT", "--- PASS", "--- SKIP", "=== NAME"} {
		if strings.HasPrefix(t, p) {
			return false
		}
	}
	return true
}

func hasChildren(tests map[string]string, name string) bool {
	for t := range tests {
		if strings.HasPrefix(t, name+"/") {
			return true
		}
	}
	return false
}

func readSpecs(dir string) map[string]specCounts {
	out := map[string]specCounts{}
	if dir == "" {
		return out
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var c specCounts
		if json.Unmarshal(b, &c) != nil {
			continue
		}
		prev := out[c.SuitePath]
		prev.SuitePath = c.SuitePath
		prev.Passed += c.Passed
		prev.Failed += c.Failed
		prev.Skipped += c.Skipped
		prev.FailedSpecs = append(prev.FailedSpecs, c.FailedSpecs...)
		out[c.SuitePath] = prev
	}
	return out
}

func readModule(gomod string) string {
	f, err := os.Open(gomod)
	if err != nil {
		return ""
	}
	defer f.Close()
	b, _ := io.ReadAll(f)
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "module ") {
			return strings.TrimSpace(strings.TrimPrefix(l, "module "))
		}
	}
	return ""
}

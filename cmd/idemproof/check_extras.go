package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/idemproof/idemproof/report"
	"github.com/idemproof/idemproof/report/baseline"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/scenarios/shard"
	"github.com/idemproof/idemproof/verdict"
)

// checkExtras are the flags of `idemproof check` that shape what runs and what is
// written, around the run itself: single report files, a baseline, skipped scenarios and
// a shard of the catalogue. They meet the run only through verdict.Report.
type checkExtras struct {
	markdown, json, junit string
	baselinePath          string
	skip                  listFlag
	shard                 string

	stdout  io.Writer // where a "-" output goes: the real stdout
	console io.Writer // where the console output goes
	base    *verdict.Report
	part    shard.Part
	skipped []string
}

func (e *checkExtras) register(fs *flag.FlagSet) {
	fs.StringVar(&e.markdown, "markdown", "", "write the Markdown summary (for a pull request or $GITHUB_STEP_SUMMARY) to this file, or - for stdout")
	fs.StringVar(&e.json, "json", "", "write the JSON report to this file, or - for stdout")
	fs.StringVar(&e.junit, "junit", "", "write the JUnit XML report to this file")
	fs.StringVar(&e.baselinePath, "baseline", "", "a report.json of an earlier run: only regressions fail (a verdict worse than there, or a new failing scenario); the rest are listed as known failures")
	fs.Var(&e.skip, "skip", "scenario IDs or globs not to run, comma list or repeated; listed in the report")
	fs.StringVar(&e.shard, "shard", "", "run shard I of N of the selected scenarios (I/N, e.g. 2/3); merge the shards' report.json with idemproof report merge")
}

// prepare checks the extra flags before anything starts and returns the writer the
// console output goes to: stderr when a report is written to stdout ("-"), so that the
// report stays parseable.
func (e *checkExtras) prepare(stdout, stderr io.Writer) (io.Writer, error) {
	e.stdout = stdout
	dash := 0
	for _, v := range []string{e.markdown, e.json} {
		if v == "-" {
			dash++
		}
	}
	if dash > 1 {
		return nil, errors.New("--markdown - and --json -: only one report can go to stdout")
	}
	if e.junit == "-" {
		return nil, errors.New("--junit -: give a file path (JUnit goes to a file a CI reads)")
	}
	if e.shard != "" {
		p, err := shard.Parse(e.shard)
		if err != nil {
			return nil, fmt.Errorf("--shard: %w", err)
		}
		e.part = p
	}
	if e.baselinePath != "" {
		rep, err := readReport(e.baselinePath)
		if err != nil {
			return nil, fmt.Errorf("--baseline: %w", err)
		}
		e.base = rep
	}
	e.console = stdout
	if dash > 0 {
		e.console = stderr
	}
	return e.console, nil
}

// narrow applies --skip and --shard to the selected scenarios. It returns what runs and
// the exact IDs to pass as the run's Only (nil when nothing was narrowed, so the run's
// own selection stands).
func (e *checkExtras) narrow(selected []scenarios.Scenario) ([]scenarios.Scenario, []string, error) {
	if len(e.skip) == 0 && e.shard == "" {
		return selected, nil, nil
	}
	keep := selected
	if len(e.skip) > 0 {
		skipped, err := scenarios.Select(e.skip, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("--skip: %w", err)
		}
		drop := map[string]bool{}
		for _, s := range skipped {
			drop[s.ID] = true
		}
		keep = nil
		for _, s := range selected {
			if drop[s.ID] {
				e.skipped = append(e.skipped, s.ID)
			} else {
				keep = append(keep, s)
			}
		}
		sort.Strings(e.skipped)
	}
	if e.shard != "" {
		keep = e.part.Of(keep)
	}
	if len(keep) == 0 {
		return nil, nil, errors.New("--skip/--shard leave no scenario to run")
	}
	ids := make([]string, len(keep))
	for i, s := range keep {
		ids[i] = s.ID
	}
	return keep, ids, nil
}

// checkBaseline pairs the baseline with the run about to start (its targets and
// scenarios), so that a baseline that would match nothing stops the run before it
// starts rather than being applied to nothing.
func (e *checkExtras) checkBaseline(targets []string, selected []scenarios.Scenario) error {
	if e.base == nil {
		return nil
	}
	planned := &verdict.Report{Targets: targets}
	for _, t := range targets {
		for _, s := range selected {
			planned.Results = append(planned.Results, verdict.Result{Target: t, ScenarioID: s.ID})
		}
	}
	if _, _, err := baseline.Apply(planned, e.base); err != nil {
		return fmt.Errorf("--baseline %s: %w", e.baselinePath, err)
	}
	return nil
}

// finish records the extras in the report and applies the baseline, before any report
// is written.
func (e *checkExtras) finish(rep *verdict.Report) {
	rep.Skipped = e.skipped
	if e.shard != "" {
		rep.Shard = e.part.String()
	}
	if e.base != nil {
		rep.Baseline = e.baselinePath
		if e.base.Strict != rep.Strict && e.console != nil {
			fmt.Fprintf(e.console, "warning: the baseline %s ran with strict=%t and this run with strict=%t: a missed SHOULD compares as NON-STRICT on one side and FAIL on the other; take the baseline from a run with the same --strict\n",
				e.baselinePath, e.base.Strict, rep.Strict)
		}
		_, pairing, err := baseline.Apply(rep, e.base)
		switch {
		case err != nil && e.console != nil: // a stopped run may have judged none of the paired scenarios
			fmt.Fprintf(e.console, "warning: --baseline %s: %v: no result is marked a known failure\n", e.baselinePath, err)
		case pairing.Note() != "" && e.console != nil:
			fmt.Fprintf(e.console, "baseline: %s\n", pairing.Note())
		}
	}
}

// write writes the single report files asked for.
func (e *checkExtras) write(console io.Writer, rep *verdict.Report) error {
	outputs := []struct {
		flag, path string
		write      func(io.Writer, *verdict.Report) error
	}{
		{"--json", e.json, report.WriteJSON},
		{"--junit", e.junit, report.WriteJUnit},
		{"--markdown", e.markdown, report.WriteMarkdown},
	}
	var written []string
	for _, o := range outputs {
		switch o.path {
		case "":
		case "-":
			if err := o.write(e.stdout, rep); err != nil {
				return fmt.Errorf("%s -: %w", o.flag, err)
			}
		default:
			if err := report.WriteFile(o.path, o.write, rep); err != nil {
				return fmt.Errorf("%s: %w", o.flag, err)
			}
			written = append(written, o.path)
		}
	}
	if len(written) > 0 {
		fmt.Fprintf(console, "\nreports: %s\n", strings.Join(written, " "))
	}
	return nil
}

// readReport reads a report.json written by idemproof (check, or report merge).
func readReport(path string) (*verdict.Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rep, err := report.ReadJSON(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rep, nil
}

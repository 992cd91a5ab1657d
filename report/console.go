package report

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/idemproof/idemproof/verdict"
)

// Progress returns a scenarios.RunConfig.Progress callback that prints one line per
// finished scenario to w. The runner may call it from several goroutines; lines never
// interleave.
func Progress(w io.Writer) func(verdict.Result) {
	var mu sync.Mutex
	return func(r verdict.Result) {
		mu.Lock()
		defer mu.Unlock()
		WriteLine(w, r)
	}
}

// WriteLine prints one result as a fixed-width line:
//
//	PASS        replay/after-503                  reference   41ms  one refund; the retry got the committed 201
func WriteLine(w io.Writer, r verdict.Result) {
	fmt.Fprintf(w, "%-10s  %-32s  %-12s  %7s  %s\n",
		r.Verdict, r.ScenarioID, r.Target, roundDuration(duration(r)), lineMessage(r))
}

// lineMessage is a result's message on its line. A provisional FAIL says first that it
// may still change: a reader of a CI log who sees it and then "no failures" should not
// have to guess which one is true.
func lineMessage(r verdict.Result) string {
	if r.Provisional {
		return oneLine("provisional, the ledger is read again when the target's run ends: " + r.Message)
	}
	return oneLine(r.Message)
}

// oneLine keeps a message on its line whatever the checker wrote, cut (between words)
// to fit a line that also carries the verdict, ID, target and duration.
func oneLine(s string) string { return shorten(flat(s), 160) }

// roomy is a message where there is room for it (the summary's details, the Markdown
// and HTML reports): on one line, whole, up to a bound that only a runaway message
// reaches.
func roomy(s string) string { return shorten(flat(s), 2000) }

// flat is s on one line, control characters escaped, runs of white space as one space.
func flat(s string) string {
	return strings.Join(strings.Fields(printable(strings.ReplaceAll(s, "\n", " "))), " ")
}

// WriteSummary prints the counts per verdict per target, then, for every failing result
// (FAIL; UNKNOWN and NON-STRICT too under strict), its evidence categories, examples,
// the attempts its checker blamed with what they should have got (and how their body
// differs from the committed one), the aligned timeline and the seed with the command that repeats it. An incomplete run says
// so first, and lists what never ran. A run with N/A results ends with what to declare
// next (DeclareNext): each declaration the profile lacks, ranked by how many of the N/A
// scenarios it would judge.
func WriteSummary(w io.Writer, rep *verdict.Report) {
	writeSummary(w, rep)
	writeDeclareNext(w, rep)
}

func writeSummary(w io.Writer, rep *verdict.Report) {
	if banner := IncompleteBanner(rep); banner != "" {
		fmt.Fprintf(w, "%s\n", banner)
		if len(rep.NotRun) > 0 {
			fmt.Fprintf(w, "not run: %s\n", notRunText(rep.NotRun))
		}
		fmt.Fprintln(w)
	}
	counts := CountByTarget(rep)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-*s\t", targetWidth(rep), "target")
	for _, v := range verdictOrder {
		fmt.Fprintf(tw, "%s\t", v)
	}
	fmt.Fprintln(tw, "total\t")
	// The table is right-aligned for the numbers; padding the names by hand keeps them
	// left-aligned.
	width := targetWidth(rep)
	for _, t := range targets(rep) {
		fmt.Fprintf(tw, "%-*s\t", width, t)
		for _, v := range verdictOrder {
			fmt.Fprintf(tw, "%d\t", counts[t][v])
		}
		fmt.Fprintf(tw, "%d\t\n", counts[t].Total())
	}
	tw.Flush()
	writeCauses(w, rep)

	failing := failingResults(rep)
	if !rep.Strict {
		// Not detailed without strict, but an UNKNOWN is never a pass: say so rather than
		// let "no failures" stand alone.
		for _, v := range []verdict.Verdict{verdict.Unknown, verdict.NonStrict} {
			var ids []string
			for _, r := range rep.Results {
				if r.Verdict == v {
					ids = append(ids, r.ScenarioID+" @ "+r.Target)
				}
			}
			what := "not failing without --strict"
			if v == verdict.Unknown {
				what = "nothing proven for them (incomplete, never a pass)"
			}
			if len(ids) > 0 {
				fmt.Fprintf(w, "\n%d %s result(s), %s: %s\n", len(ids), v, what, strings.Join(ids, ", "))
			}
		}
	}
	if known := KnownFailures(rep); len(known) > 0 {
		fmt.Fprintf(w, "\n%d known failure(s), failing in the baseline %s too, not failing this run:\n", len(known), rep.Baseline)
		for _, r := range known {
			fmt.Fprintf(w, "  %s %s @ %s, %s: %s\n", r.Verdict, r.ScenarioID, r.Target, knownLabel(r), roomy(r.Message))
		}
	}
	if len(rep.Skipped) > 0 {
		fmt.Fprintf(w, "\n%d scenario(s) skipped (--skip): %s\n", len(rep.Skipped), strings.Join(rep.Skipped, ", "))
	}
	if len(failing) == 0 {
		if rep.Incomplete() {
			fmt.Fprintf(w, "\nno failures among the results, but the run is INCOMPLETE (%s, strict=%t)\n", SeedText(rep), rep.Strict)
			return
		}
		fmt.Fprintf(w, "\nno failures (%s, strict=%t)\n", SeedText(rep), rep.Strict)
		return
	}
	unknown := 0
	for _, r := range failing {
		if r.Verdict == verdict.Unknown {
			unknown++
		}
	}
	if unknown == 0 {
		fmt.Fprintf(w, "\n%d failing result(s) (%s, strict=%t):\n", len(failing), SeedText(rep), rep.Strict)
	} else { // detailed under strict, but an UNKNOWN is incomplete (exit 3), not a FAIL
		fmt.Fprintf(w, "\n%d failing result(s) and %d UNKNOWN (incomplete, never a pass) (%s, strict=%t):\n", len(failing)-unknown, unknown, SeedText(rep), rep.Strict)
	}
	for _, r := range failing {
		fmt.Fprintf(w, "\n%s %s @ %s: %s\n", r.Verdict, r.ScenarioID, r.Target, roomy(r.Message))
		fmt.Fprintf(w, "  requirement: %s [%s; %s]\n", r.Requirement, r.Level, r.Source)
		if c := CategoriesText(r.Evidence.Categories); c != "" {
			fmt.Fprintf(w, "  evidence: %s\n", c)
		}
		for _, ex := range r.Evidence.Examples {
			fmt.Fprintf(w, "  - %s\n", roomy(ex))
		}
		for _, l := range blameLines(r.Evidence) {
			fmt.Fprintf(w, "  %s\n", printable(l))
		}
		if r.Evidence.Record != nil {
			io.WriteString(w, ResultTimeline(r))
		}
		fmt.Fprintf(w, "  repeat: %s\n", RepeatCommand(rep, r))
	}
}

// SeedText is the run's seed, "seed 5", or for a repeated check its seeds and runs,
// "seeds 5-7, 3 runs".
func SeedText(rep *verdict.Report) string {
	if rep.Runs > 1 {
		return fmt.Sprintf("seeds %d-%d, %d runs", rep.Seed, rep.Seed+int64(rep.Runs)-1, rep.Runs)
	}
	return fmt.Sprintf("seed %d", rep.Seed)
}

// RepeatCommand is the command line that runs one result's scenario again with the same
// seed against the same target; the report's own Repeat when a tool set one.
func RepeatCommand(rep *verdict.Report, r verdict.Result) string {
	if rep.Repeat != "" {
		return rep.Repeat
	}
	seed := rep.Seed
	if r.Evidence.Record != nil && r.Evidence.Record.Seed != 0 {
		seed = r.Evidence.Record.Seed
	}
	cmd := fmt.Sprintf("idemproof check --seed %d --only %s", seed, r.ScenarioID)
	if flaws, postgres, ok := embeddedVariant(r.Target); ok {
		for _, f := range flaws {
			cmd += " --flaw " + f
		}
		if postgres {
			cmd += " --store postgres://…"
		}
	} else if src := rep.TargetSources[r.Target]; src != "" {
		cmd += " --profile " + ShellQuote(src)
	} else if r.Target != "" {
		cmd += " --profile " + r.Target
	}
	if rep.Strict {
		cmd += " --strict"
	}
	return cmd
}

// embeddedVariant parses the target names the embedded reference server gets
// (internal/embedded): "reference", then "+flaw" per flaw, then "@postgres".
func embeddedVariant(target string) (flaws []string, postgres bool, ok bool) {
	rest, found := strings.CutPrefix(target, "reference")
	if !found || (rest != "" && rest[0] != '+' && rest[0] != '@') {
		return nil, false, false
	}
	rest, postgres = strings.CutSuffix(rest, "@postgres")
	for _, f := range strings.Split(rest, "+") {
		if f != "" {
			flaws = append(flaws, f)
		}
	}
	return flaws, postgres, true
}

// notRunText is "a/b, c/d @ t1; e/f @ t2": the scenarios never started, per target,
// cut after 40 so an interrupted 1,000-scenario matrix stays readable.
func notRunText(list []verdict.NotRun) string {
	const show = 40
	var parts []string
	for i := 0; i < len(list) && i < show; {
		j, ids := i, []string{}
		for ; j < len(list) && j < show && list[j].Target == list[i].Target; j++ {
			ids = append(ids, list[j].ScenarioID)
		}
		parts = append(parts, strings.Join(ids, ", ")+" @ "+list[i].Target)
		i = j
	}
	s := strings.Join(parts, "; ")
	if len(list) > show {
		s += fmt.Sprintf("; and %d more", len(list)-show)
	}
	return s
}

// failingResults is every result that fails the run, in report order: known failures
// of the baseline are not among them.
func failingResults(rep *verdict.Report) []verdict.Result {
	var out []verdict.Result
	for _, r := range rep.Results {
		if FailsRun(rep, r) {
			out = append(out, r)
		}
	}
	return out
}

// CategoriesText is the evidence categories with what each counts, sorted:
// "duplicated=2 (side effects beyond the one a key allows); leaked=1 (answers carrying
// the stored response of another request …)".
func CategoriesText(c map[string]int) string {
	parts := make([]string, 0, len(c))
	for _, k := range sortedKeys(c) {
		part := fmt.Sprintf("%s=%d", k, c[k])
		if what := verdict.CategoryCounts(k); what != "" {
			part += " (" + what + ")"
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, "; ")
}

// categoryNames is the categories alone, "duplicated=2 leaked=1", for the compact
// Markdown line.
func categoryNames(c map[string]int) string {
	parts := make([]string, 0, len(c))
	for _, k := range sortedKeys(c) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, c[k]))
	}
	return strings.Join(parts, " ")
}

// sortedKeys is a count map's keys in order, for output that does not change between
// runs.
func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// targetWidth is the width of the summary's target column.
func targetWidth(rep *verdict.Report) int {
	width := len("target")
	for _, t := range targets(rep) {
		width = max(width, len(t))
	}
	return width
}

// ShellQuote single-quotes s unless it is made of characters a shell leaves alone, so a
// printed command line can be pasted back.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=,:@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

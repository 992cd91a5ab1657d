package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/idemproof/idemproof/verdict"
)

// MarkdownFile is the name WriteDir gives the Markdown summary.
const MarkdownFile = "report.md"

// MaxMarkdownResults bounds the results the Markdown summary details (failing first, then
// unknown, then known failures); the rest are counted and left to report.html. It keeps
// the summary far below a pull request comment's size limit.
const MaxMarkdownResults = 40

// WriteMarkdown writes a summary small enough for a pull request comment or
// $GITHUB_STEP_SUMMARY: the INCOMPLETE banner of an interrupted run first, the verdict
// counts per target, the causes several results share (Causes), every failing result with its
// one-line evidence, its first blamed attempt and the command that repeats it, the UNKNOWN results (never a pass),
// the baseline's known failures and the skipped scenarios, the notes (results labelled verdict.SummaryLabel), and with several targets the
// scenarios × targets matrix of the scenarios whose verdicts differ between targets or
// are not PASS, and, where results are N/A, what to declare next (DeclareNext). Text from
// targets is escaped so a response body cannot break the page.
func WriteMarkdown(w io.Writer, rep *verdict.Report) error {
	var b strings.Builder
	ts := targets(rep)
	failing := failingResults(rep)
	unknownFailing := 0 // under strict, detailed with the failures; still not a FAIL
	for _, r := range failing {
		if r.Verdict == verdict.Unknown {
			unknownFailing++
		}
	}
	status := "no failures"
	if n := len(failing) - unknownFailing; n > 0 {
		status = fmt.Sprintf("%d failing", n)
	}
	if unknownFailing > 0 {
		status += fmt.Sprintf(", %d UNKNOWN", unknownFailing)
	}
	banner := IncompleteBanner(rep)
	if banner != "" {
		status += ", INCOMPLETE"
	}
	fmt.Fprintf(&b, "## idemproof: %s\n\n", status)
	if banner != "" {
		fmt.Fprintf(&b, "> **%s**", mdText(banner))
		if len(rep.NotRun) > 0 {
			fmt.Fprintf(&b, "\n> not run: %s", mdText(notRunText(rep.NotRun)))
		}
		b.WriteString("\n\n")
	}
	fmt.Fprintf(&b, "%s · %s · strict=%t", mdText(rep.Tool), SeedText(rep), rep.Strict)
	if rep.Shard != "" {
		fmt.Fprintf(&b, " · shard %s", mdText(rep.Shard))
	}
	if len(rep.Shards) > 0 {
		fmt.Fprintf(&b, " · merged from shards %s", mdText(strings.Join(rep.Shards, ", ")))
	}
	if rep.Baseline != "" {
		fmt.Fprintf(&b, " · baseline `%s`", mdCode(rep.Baseline))
	}
	b.WriteString("\n\n")

	counts := CountByTarget(rep)
	knownFailures := KnownFailures(rep)
	// The known column exists where a baseline was applied: without one it would only
	// say 0 and make a reader wonder what "known" is.
	withKnown := rep.Baseline != "" || len(knownFailures) > 0
	b.WriteString("| target |")
	for _, v := range verdictOrder {
		fmt.Fprintf(&b, " %s |", v)
	}
	if withKnown {
		b.WriteString(" known |")
	}
	b.WriteString(" total |\n|---|")
	for range verdictOrder {
		b.WriteString("--:|")
	}
	if withKnown {
		b.WriteString("--:|")
	}
	b.WriteString("--:|\n")
	known := map[string]int{}
	for _, r := range knownFailures {
		known[r.Target]++
	}
	for _, t := range ts {
		fmt.Fprintf(&b, "| %s |", mdText(t))
		for _, v := range verdictOrder {
			fmt.Fprintf(&b, " %d |", counts[t][v])
		}
		if withKnown {
			fmt.Fprintf(&b, " %d |", known[t])
		}
		fmt.Fprintf(&b, " %d |\n", counts[t].Total())
	}

	writeMarkdownCauses(&b, rep)

	shown := 0
	section := func(title string, list []verdict.Result) {
		if len(list) == 0 {
			return
		}
		fmt.Fprintf(&b, "\n### %s (%d)\n\n", title, len(list))
		for i, r := range list {
			if shown == MaxMarkdownResults {
				fmt.Fprintf(&b, "- … %d more in report.html\n", len(list)-i)
				return
			}
			shown++
			fmt.Fprintf(&b, "- **%s** `%s` @ %s: %s", r.Verdict, mdCode(r.ScenarioID), mdText(r.Target), mdText(r.Message))
			if c := categoryNames(r.Evidence.Categories); c != "" {
				fmt.Fprintf(&b, " (%s)", mdText(c))
			}
			if r.KnownFailure {
				fmt.Fprintf(&b, " — %s", knownLabel(r))
			}
			if bl := blameSummary(r.Evidence); bl != "" {
				fmt.Fprintf(&b, "\n  ✗ %s", mdText(bl))
			}
			fmt.Fprintf(&b, "\n  `%s`\n", mdCode(RepeatCommand(rep, r)))
		}
	}
	section("Failing", failing)
	var unknown []verdict.Result
	for _, r := range rep.Results {
		if r.Verdict == verdict.Unknown && !FailsRun(rep, r) && !r.KnownFailure {
			unknown = append(unknown, r)
		}
	}
	section("Unknown (the outcome could not be seen; not a pass)", unknown)
	section("Known failures (failing in the baseline too; not failing this run)", KnownFailures(rep))
	var notes []verdict.Result
	for _, r := range rep.Results {
		if slices.Contains(r.Labels, verdict.SummaryLabel) {
			notes = append(notes, r)
		}
	}
	if len(notes) > 0 {
		b.WriteString("\n### Notes\n\n")
		for _, r := range notes {
			fmt.Fprintf(&b, "- `%s`: %s\n", mdCode(r.ScenarioID), mdText(r.Message))
		}
	}
	if len(rep.Skipped) > 0 {
		fmt.Fprintf(&b, "\n### Skipped (%d, --skip)\n\n", len(rep.Skipped))
		for i, id := range rep.Skipped {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "`%s`", mdCode(id))
		}
		b.WriteString("\n")
	}
	if len(ts) > 1 {
		writeMarkdownMatrix(&b, rep, ts)
	}
	writeMarkdownDeclareNext(&b, rep)
	_, err := io.WriteString(w, b.String())
	if err != nil {
		return fmt.Errorf("write markdown report: %w", err)
	}
	return nil
}

// writeMarkdownMatrix writes the scenarios × targets table, keeping only the scenarios
// worth a reader's eye: those not PASS everywhere.
func writeMarkdownMatrix(b *strings.Builder, rep *verdict.Report, ts []string) {
	byKey := map[[2]string]verdict.Result{}
	for _, r := range rep.Results {
		byKey[[2]string{r.ScenarioID, r.Target}] = r
	}
	var rows []string
	allPass := 0
	for _, id := range scenarioOrder(rep) {
		cells := make([]string, len(ts))
		clean := true
		for i, t := range ts {
			r, ok := byKey[[2]string{id, t}]
			switch {
			case !ok:
				cells[i], clean = "–", false
			case r.KnownFailure:
				cells[i], clean = string(r.Verdict)+" (known)", false
			default:
				cells[i] = string(r.Verdict)
				clean = clean && r.Verdict == verdict.Pass
			}
		}
		if clean {
			allPass++
			continue
		}
		rows = append(rows, fmt.Sprintf("| `%s` | %s |", mdCode(id), strings.Join(cells, " | ")))
	}
	fmt.Fprintf(b, "\n### Matrix (%d scenarios; %d PASS on every target not shown)\n\n", len(rows)+allPass, allPass)
	if len(rows) == 0 {
		return
	}
	b.WriteString("| scenario |")
	for _, t := range ts {
		fmt.Fprintf(b, " %s |", mdText(t))
	}
	b.WriteString("\n|---|")
	for range ts {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for i, row := range rows {
		if i == MaxMarkdownResults {
			fmt.Fprintf(b, "\n… %d more rows in report.html\n", len(rows)-i)
			return
		}
		b.WriteString(row + "\n")
	}
}

// knownLabel says why a result does not fail the run: "known failure (baseline: FAIL)".
func knownLabel(r verdict.Result) string {
	if r.BaselineVerdict != "" {
		return "known failure (baseline: " + string(r.BaselineVerdict) + ")"
	}
	return "known failure"
}

// mdTextRunes bounds one text of the Markdown summary (a message, an example), cut
// between words: room for every message a checker writes, while 40 results stay far
// below a pull request comment's limit.
const mdTextRunes = 300

// mdText escapes the characters Markdown or the HTML GitHub allows in it would
// interpret, and keeps the text on one line.
func mdText(s string) string {
	s = shorten(flat(s), mdTextRunes)
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '\\', '`', '*', '_', '[', ']', '|', '<', '>', '#', '~', '!', '&':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// mdCode makes s safe inside a single-backtick code span: no backtick, no line break,
// no pipe (which would split a table cell even inside a code span).
func mdCode(s string) string {
	return strings.NewReplacer("`", "'", "|", "¦", "\n", " ", "\r", " ").Replace(printable(s))
}

// writeMarkdownDeclareNext writes each target's plan as a table: the declaration, how
// many N/A scenarios it would judge, which.
func writeMarkdownDeclareNext(b *strings.Builder, rep *verdict.Report) {
	for _, plan := range DeclareNext(rep) {
		h := declareNextHeading(rep, plan)
		fmt.Fprintf(b, "\n### %s\n\n", mdText(capitalized(h)))
		b.WriteString("Each row judges its scenarios once the rows above it are declared too.\n\n")
		b.WriteString("| declare | judges | scenarios |\n|---|--:|---|\n")
		code := func(id string) string { return "`" + mdCode(id) + "`" }
		for _, s := range plan.Steps {
			what := ""
			if w := s.What(); w != "" {
				what = ": " + mdText(w)
			}
			fmt.Fprintf(b, "| `%s`%s | %d | %s (%s) |\n", mdCode(s.Field()), what, len(s.Scenarios),
				idsText(s.Scenarios, 8, code), levelsText(s.Scenarios))
		}
		if len(plan.Facts) > 0 {
			fmt.Fprintf(b, "| no declaration: a fact of the target (%s) | %d | %s |\n", mdText(factsText(plan.Facts)), len(plan.Facts), idsText(plan.Facts, 8, code))
		}
	}
}

// writeMarkdownCauses writes the causes several results share, each with its count and
// its scenarios per level.
func writeMarkdownCauses(b *strings.Builder, rep *verdict.Report) {
	causes := Causes(rep)
	if len(causes) == 0 {
		return
	}
	h := causesHeading(rep, causes)
	fmt.Fprintf(b, "\n### %s\n\n", mdText(capitalized(h)))
	for _, c := range causes {
		fmt.Fprintf(b, "- **%s** @ %s: %s\n", c.Count(), mdText(c.Target), mdText(c.Summary))
		for _, l := range causeLevels(c, func(r verdict.Result) string { return string(r.Verdict) + " `" + mdCode(r.ScenarioID) + "`" }) {
			fmt.Fprintf(b, "  - %s: %s\n", l[0], l[1])
		}
	}
}

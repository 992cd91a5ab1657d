package scanreport

import (
	"fmt"
	"io"
	"strings"

	"github.com/idemproof/idemproof/scan"
	"github.com/idemproof/idemproof/verdict"
)

// maxMarkdownFindings bounds the findings the summary details; the rest are in
// report.html.
const maxMarkdownFindings = 40

// WriteMarkdown writes a summary for a pull request or $GITHUB_STEP_SUMMARY: the headline,
// the matrix, every FAIL and UNKNOWN with its evidence, and what was not probed. Text
// from the target is escaped so an answer cannot break the page.
func WriteMarkdown(w io.Writer, rep *scan.Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## idemproof scan: %s\n\n", md(rep.Headline.Text))
	if rep.Interrupted != "" {
		fmt.Fprintf(&b, "> **INCOMPLETE: the scan was interrupted (%s)**\n\n", md(rep.Interrupted))
	}
	fmt.Fprintf(&b, "%s · %s · seed %d\n\n", md(Header(rep.Target)), md(rep.Tool), rep.Seed)
	b.WriteString("| operation |")
	for _, c := range scan.Checks {
		fmt.Fprintf(&b, " %s |", c.Title())
	}
	b.WriteString("\n|---|")
	for range scan.Checks {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, r := range rep.Rows {
		fmt.Fprintf(&b, "| `%s` |", code(r.Operation.Name))
		for _, c := range r.Cells {
			fmt.Fprintf(&b, " %s |", mark(c.Verdict))
		}
		b.WriteString("\n")
	}
	var findings []string
	for _, r := range rep.Rows {
		if !r.Operation.Probed() {
			continue
		}
		for _, c := range r.Cells {
			if c.Verdict == verdict.Fail || c.Verdict == verdict.Unknown {
				findings = append(findings, fmt.Sprintf("- **%s** `%s` · %s: %s", c.Verdict, code(r.Operation.Name), c.Check.Title(), md(c.Evidence)))
			}
		}
	}
	if len(findings) > 0 {
		b.WriteString("\n### FAIL and UNKNOWN\n\n")
		for i, f := range findings {
			if i == maxMarkdownFindings {
				fmt.Fprintf(&b, "- … and %d more in report.html\n", len(findings)-i)
				break
			}
			b.WriteString(f + "\n")
		}
	}
	var skipped []string
	for _, r := range rep.Rows {
		if op := r.Operation; !op.Probed() {
			why := op.Skip
			if why == "" {
				why = op.Problem
			}
			skipped = append(skipped, fmt.Sprintf("- `%s`: %s", code(op.Name), md(why)))
		}
	}
	if len(skipped) > 0 {
		b.WriteString("\n### Not probed\n\n" + strings.Join(skipped, "\n") + "\n")
	}
	for _, n := range rep.Target.Notes {
		fmt.Fprintf(&b, "\n> note: %s\n", md(n))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mark(v verdict.Verdict) string {
	switch v {
	case verdict.Fail, verdict.Unknown:
		return "**" + string(v) + "**"
	}
	return string(v)
}

// md escapes text for Markdown: the characters that would start markup or break a table.
func md(s string) string {
	s = oneLine(s)
	r := strings.NewReplacer(`\`, `\\`, "|", `\|`, "*", `\*`, "_", `\_`, "`", "\\`", "<", "&lt;", ">", "&gt;", "[", `\[`, "]", `\]`)
	return r.Replace(s)
}

// code is text for inside backticks (which it may not contain).
func code(s string) string { return strings.ReplaceAll(oneLine(s), "`", "'") }

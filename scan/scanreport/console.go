// Package scanreport writes an idemproof scan: the plan before anything is called, a line
// per operation as its probes end, and the report — the operations × checks matrix with
// one line of evidence per cell and the headline — as console text, report.json,
// report.md and a self-contained report.html in the style of check's (report.StyleSheet).
package scanreport

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/idemproof/idemproof/scan"
)

// Header is the line that opens a plan and a report: what is scanned.
func Header(t *scan.Target) string {
	var b strings.Builder
	noun := "tools"
	if t.Kind == scan.KindOpenAPI {
		noun = "mutating operations"
		fmt.Fprintf(&b, "openapi %s at %s", t.Source, t.Endpoint)
	} else if len(t.Command) > 0 {
		fmt.Fprintf(&b, "mcp stdio server %s", t.Source)
	} else {
		fmt.Fprintf(&b, "mcp %s", t.Source)
	}
	if t.Server != "" {
		fmt.Fprintf(&b, " (%s)", t.Server)
	}
	fmt.Fprintf(&b, ": %d %s", len(t.Operations), noun)
	if t.Kind == scan.KindMCP {
		if t.Idempotency {
			b.WriteString("; the server advertises tools.idempotency (SEP-3182)")
		} else {
			b.WriteString("; tools.idempotency (SEP-3182) not advertised")
		}
	}
	return b.String()
}

// WritePlan prints what the scan will call, operation by operation — its key, its
// arguments, its ledger, the calls its probes make — and what it will not, with why; then
// the notes of enumeration. It is all --plan prints, and what the scan shows before it
// asks to go on.
func WritePlan(w io.Writer, t *scan.Target) {
	var probed, skipped []*scan.Operation
	for _, op := range t.Operations {
		if op.Probed() {
			probed = append(probed, op)
		} else {
			skipped = append(skipped, op)
		}
	}
	fmt.Fprintf(w, "will probe %d of %d:\n", len(probed), len(t.Operations))
	for _, op := range probed {
		fmt.Fprintf(w, "  %s\n", title(op))
		writeDeclared(w, op)
		fmt.Fprintf(w, "      key        %s\n", keyText(op))
		args := op.Request.Body
		if args == "" {
			args = "(none)"
		}
		if op.Method != "" {
			fmt.Fprintf(w, "      request    %s %s %s (from %s)\n", op.Method, op.Request.Path, args, op.Request.From)
		} else {
			fmt.Fprintf(w, "      arguments  %s (from %s)\n", args, op.Request.From)
		}
		if op.Ledger != nil {
			fmt.Fprintf(w, "      ledger     %s\n", op.Ledger)
		}
		if op.IdempotentClaim != "" {
			fmt.Fprintf(w, "      claims     %s\n", op.IdempotentClaim)
		}
		fmt.Fprintf(w, "      calls      %s\n", callsText(op))
	}
	if len(skipped) > 0 {
		fmt.Fprintf(w, "not probed %d:\n", len(skipped))
		for _, op := range skipped {
			why := op.Skip
			if why == "" {
				why = op.Problem
			}
			fmt.Fprintf(w, "  %s\n", title(op))
			writeDeclared(w, op)
			fmt.Fprintf(w, "      key        %s\n      why        %s\n", keyText(op), why)
		}
	}
	for _, n := range t.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

// writeDeclared prints what the operation declares of itself: its inputs and its
// annotations.
func writeDeclared(w io.Writer, op *scan.Operation) {
	if len(op.Inputs) > 0 {
		parts := make([]string, len(op.Inputs))
		for i, in := range op.Inputs {
			parts[i] = in.String()
		}
		fmt.Fprintf(w, "      takes      %s\n", strings.Join(parts, "; "))
	}
	if a := op.Annotations; a != nil {
		fmt.Fprintf(w, "      annotated  %s\n", annotationText(a))
	}
}

// annotationText is a tool's hints as it declared them.
func annotationText(a *scan.Annotations) string {
	parts := []string{fmt.Sprintf("readOnlyHint: %t", a.ReadOnlyHint), fmt.Sprintf("idempotentHint: %t", a.IdempotentHint)}
	if a.DestructiveHint != nil {
		parts = append(parts, fmt.Sprintf("destructiveHint: %t", *a.DestructiveHint))
	}
	if a.OpenWorldHint != nil {
		parts = append(parts, fmt.Sprintf("openWorldHint: %t", *a.OpenWorldHint))
	}
	return strings.Join(parts, ", ")
}

func title(op *scan.Operation) string {
	if op.Method != "" && op.Name != op.Method+" "+op.Path {
		return fmt.Sprintf("%s (%s %s)", op.Name, op.Method, op.Path)
	}
	return op.Name
}

func keyText(op *scan.Operation) string {
	if op.Key == nil {
		return "none"
	}
	return fmt.Sprintf("%s (%s)", op.Key, op.Key.Why)
}

// callsText says what an operation's probes will send.
func callsText(op *scan.Operation) string {
	parts := []string{"2 with fresh keys (a per-execution value?)", "1 whose answer is lost after it ran, and its repeat"}
	if op.Key == nil {
		parts[0] = "2 plain calls (a per-execution value?)"
		parts[1] = "1 whose answer is lost after it ran, and its plain repeat"
		return strings.Join(parts, "; ") + ": at most 4"
	}
	if c := op.Request.Change; c != nil {
		parts = append(parts, fmt.Sprintf("1, then the same key with %s (and the changed arguments under a fresh key, if refused)", c.What))
	}
	parts = append(parts, fmt.Sprintf("pairs of copies, one key each, at once, until %d met at the server, at most %d (and a retry of one not answered with a success)", scan.ConcurrentMet, scan.ConcurrentPairs))
	return strings.Join(parts, "; ") + fmt.Sprintf(": at most %d, and retries of in-flight answers", maxCalls(op))
}

func maxCalls(op *scan.Operation) int {
	n := 2 + 2 + 3*scan.ConcurrentPairs
	if op.Request.Change != nil {
		n += 3
	}
	return n
}

// Progress prints one line per operation as its probes end.
func Progress(w io.Writer) func(scan.Row) {
	return func(r scan.Row) {
		var cells []string
		for _, c := range r.Cells {
			cells = append(cells, fmt.Sprintf("%-7s", c.Verdict))
		}
		fmt.Fprintf(w, "%-24s %s %3d calls %7s\n", clip(r.Operation.Name, 24), strings.Join(cells, " "), r.Calls, r.Duration.Round(time.Millisecond))
	}
}

// WriteSummary prints the report: the matrix, each operation's evidence, the notes and
// the headline.
func WriteSummary(w io.Writer, rep *scan.Report) {
	if rep.Interrupted != "" {
		fmt.Fprintf(w, "INCOMPLETE: the scan was interrupted (%s): what did not run is UNKNOWN\n\n", rep.Interrupted)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "operation")
	for _, c := range scan.Checks {
		fmt.Fprintf(tw, "\t%s", c.Title())
	}
	fmt.Fprintln(tw)
	for _, r := range rep.Rows {
		fmt.Fprint(tw, clip(r.Operation.Name, 40))
		for _, c := range r.Cells {
			fmt.Fprintf(tw, "\t%s", c.Verdict)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	fmt.Fprintln(w)
	for _, r := range rep.Rows {
		op := r.Operation
		if !op.Probed() {
			why := op.Skip
			if why == "" {
				why = op.Problem
			}
			fmt.Fprintf(w, "%s — not probed: %s\n  %-30s %-7s %s\n", op.Name, why, scan.CheckKey.Title(), r.Cells[0].Verdict, r.Cells[0].Evidence)
			continue
		}
		fmt.Fprintf(w, "%s — %d calls, %s", op.Name, r.Calls, r.Duration.Round(time.Millisecond))
		if r.PerExecution != "" {
			fmt.Fprintf(w, "; per-execution value %s", r.PerExecution)
		}
		if op.Ledger != nil {
			fmt.Fprintf(w, "; ledger %s", op.Ledger)
		}
		fmt.Fprintln(w)
		for _, c := range r.Cells {
			fmt.Fprintf(w, "  %-30s %-7s %s\n", c.Check.Title(), c.Verdict, oneLine(c.Evidence))
		}
	}
	for _, n := range rep.Target.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	fmt.Fprintf(w, "\n%s\n", rep.Headline.Text)
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// oneLine keeps evidence on its line, whatever a server put in its answer.
func oneLine(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' || r == '\t' || r < 0x20 }), " ")
}

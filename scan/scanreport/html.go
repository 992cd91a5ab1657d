package scanreport

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"

	"github.com/idemproof/idemproof/report"
	"github.com/idemproof/idemproof/scan"
	"github.com/idemproof/idemproof/verdict"
)

//go:embed scan.html.tmpl
var htmlTemplate string

var pageTemplate = template.Must(template.New("scan").Funcs(template.FuncMap{
	"verdictClass": report.VerdictClass,
}).Parse(htmlTemplate))

// verdicts are the verdicts a scan's cells take, in the order the counts show them.
var verdicts = []verdict.Verdict{verdict.Pass, verdict.Fail, verdict.NA, verdict.Unknown}

type htmlPage struct {
	Style                                                         template.CSS
	Title, Tool, Target, Started, Duration, Headline, Interrupted string
	Seed                                                          int64
	Failing                                                       int
	Counts                                                        []htmlCount
	Total                                                         int
	Notes                                                         []string
	Columns                                                       []string
	Rows                                                          []htmlRow
}

type htmlCount struct {
	Verdict verdict.Verdict
	N       int
}

type htmlRow struct {
	Name, Anchor, Route, Description, Key, Annotations, Request, Change, PerExecution, Ledger, NotProbed string
	Calls                                                                                                int
	Duration                                                                                             string
	Cells                                                                                                []htmlCell
}

type htmlCell struct {
	Operation, Anchor, Title, Evidence string
	Check                              scan.Check
	Verdict                            verdict.Verdict
}

// WriteHTML writes one self-contained page: the headline, the cells counted by verdict,
// the operations × checks matrix coloured by verdict (each cell's evidence in its title),
// and per operation what the scan knew of it (key, annotations, arguments, per-execution
// value, ledger) with every cell's evidence. No script and no external asset.
func WriteHTML(w io.Writer, rep *scan.Report) error {
	p := htmlPage{
		Style: report.StyleSheet(), Title: "idemproof scan", Tool: rep.Tool, Target: Header(rep.Target),
		Started: rep.Started.UTC().Format(time.RFC3339), Duration: (time.Duration(rep.DurationMS * float64(time.Millisecond))).Round(time.Millisecond).String(),
		Headline: rep.Headline.Text, Interrupted: rep.Interrupted, Seed: rep.Seed, Notes: rep.Target.Notes,
	}
	if rep.Target.Server != "" {
		p.Title += ": " + rep.Target.Server
	}
	for _, c := range scan.Checks {
		p.Columns = append(p.Columns, c.Title())
	}
	counts := map[verdict.Verdict]int{}
	for i, r := range rep.Rows {
		op := r.Operation
		anchor := fmt.Sprintf("op-%d", i+1)
		row := htmlRow{Name: op.Name, Anchor: anchor, Description: op.Description, Key: keyText(op), PerExecution: r.PerExecution,
			Calls: r.Calls, Duration: r.Duration.Round(time.Millisecond).String()}
		if op.Method != "" {
			row.Route = op.Method + " " + op.Path
		}
		if op.Annotations != nil {
			b, _ := json.Marshal(op.Annotations)
			row.Annotations = string(b)
		}
		if op.Request != nil {
			row.Request = strings.TrimSpace(op.Request.Path + " " + op.Request.Body)
			if c := op.Request.Change; c != nil {
				row.Change = c.What
			}
		}
		if op.Ledger != nil {
			row.Ledger = op.Ledger.String()
		}
		if !op.Probed() {
			row.NotProbed = op.Skip
			if row.NotProbed == "" {
				row.NotProbed = op.Problem
			}
		}
		for j, c := range r.Cells {
			counts[c.Verdict]++
			if c.Verdict == verdict.Fail {
				p.Failing++
			}
			row.Cells = append(row.Cells, htmlCell{Operation: op.Name, Anchor: fmt.Sprintf("%s-%d", anchor, j+1), Title: c.Check.Title(),
				Evidence: c.Evidence, Check: c.Check, Verdict: c.Verdict})
		}
		p.Rows = append(p.Rows, row)
	}
	for _, v := range verdicts {
		p.Counts = append(p.Counts, htmlCount{Verdict: v, N: counts[v]})
		p.Total += counts[v]
	}
	if err := pageTemplate.Execute(w, p); err != nil {
		return fmt.Errorf("write html report: %w", err)
	}
	return nil
}

package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"

	"github.com/idemproof/idemproof/internal/bodytext"
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/verdict"
)

//go:embed report.html.tmpl
var htmlTemplate string

//go:embed style.css
var styleSheet string

// StyleSheet is the reports' CSS: check's report.html, and the page of any other command
// that reports in the same style (idemproof scan's), so the two read alike. Its classes
// include the verdict colours (VerdictClass), .matrix, .counts, .badge, article, details.
func StyleSheet() template.CSS { return template.CSS(styleSheet) }

var pageTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"verdictClass": VerdictClass,
}).Parse(htmlTemplate))

// htmlPage is the view the template renders: everything precomputed, no logic in the
// template beyond loops.
type htmlPage struct {
	Style    template.CSS
	Title    string
	Tool     string
	Started  string
	Duration string
	Seed     string // "seed 5", or "seeds 5-7, 3 runs" (SeedText)
	Strict   bool
	Targets  []string
	Verdicts []verdict.Verdict
	Counts   []htmlCountRow
	Groups   []htmlGroup
	Failing  int
	Failures []htmlFailure // failing results, linked, above the matrix
	Known    []htmlFailure // the baseline's known failures, listed apart
	Baseline string
	Skipped  []string
	Columns  int // matrix columns: scenario, level, description, one per target
	// Incomplete is the banner of a run stopped early (IncompleteBanner), NotRun the
	// scenarios it never started; both "" for a complete run.
	Incomplete, NotRun string
	// Declare is what to declare next, per target with N/A results (DeclareNext).
	Declare []htmlDeclarePlan
	// CausesHeading and Causes are the causes several results share (Causes).
	CausesHeading string
	Causes        []htmlCause
}

type htmlCause struct {
	Count, Target, Summary string
	Levels                 []htmlCauseLevel
}

type htmlCauseLevel struct {
	Level   string
	Results []htmlCauseResult
}

type htmlCauseResult struct {
	Anchor, ScenarioID string
	Verdict            verdict.Verdict
}

type htmlDeclarePlan struct {
	Heading string
	Steps   []htmlDeclareStep
}

// htmlDeclareStep is one row: a declaration (or, for the facts of the target, none)
// and the N/A results it would judge, linked to their details.
type htmlDeclareStep struct {
	Field, What, Levels string
	Scenarios           []htmlLink
}

type htmlLink struct{ Anchor, Text string }

type htmlFailure struct {
	Anchor, ScenarioID, Target, Message, Label string
	Verdict                                    verdict.Verdict
}

type htmlCountRow struct {
	Target string
	Cells  []htmlCount
	Total  int
}

type htmlCount struct {
	Verdict verdict.Verdict
	N       int
}

type htmlGroup struct {
	Name      string
	Scenarios []htmlScenario
}

type htmlScenario struct {
	ID          string
	Anchor      string
	Description string
	Requirement string
	Source      string
	Level       verdict.Level
	Labels      []string
	Cells       []htmlCell // one per target, in target order
}

// htmlCell is one result: a matrix cell and a detail block.
type htmlCell struct {
	ScenarioID string
	Target     string
	Present    bool
	Anchor     string
	Verdict    verdict.Verdict
	Message    string
	Duration   string
	Open       bool // failing results are expanded
	Categories []htmlCategory
	Examples   []string
	Blames     []htmlBlame
	SVG        template.HTML
	Repeat     string
	Known      bool
}

// htmlBlame is one attempt the checker blamed: what it got, what was wanted, its body as
// indented JSON, and the committed body with the differences where the rule compared
// them.
type htmlBlame struct {
	Attempt, Got, Want string
	Body, Committed    string
	Status             int // of this answer
	CommittedStatus    int
	Diff               []bodytext.Change
	Identical          bool // compared with the committed response and equal to it
}

type htmlCategory struct {
	Name string
	N    int
	What string // what the count counts (verdict.CategoryCounts)
}

// WriteHTML writes one self-contained HTML page: the counts per target, the scenarios ×
// targets matrix coloured by verdict, and per scenario and target the verdict, the
// evidence and the attempt timeline as an inline SVG sequence diagram. No script and no
// external asset is referenced; the page works from a file:// URL or a CI artifact.
func WriteHTML(w io.Writer, rep *verdict.Report) error {
	if err := pageTemplate.Execute(w, buildPage(rep)); err != nil {
		return fmt.Errorf("write html report: %w", err)
	}
	return nil
}

func buildPage(rep *verdict.Report) htmlPage {
	ts := targets(rep)
	p := htmlPage{
		Style:    StyleSheet(),
		Title:    "idemproof report",
		Tool:     rep.Tool,
		Seed:     SeedText(rep),
		Strict:   rep.Strict,
		Targets:  ts,
		Verdicts: verdictOrder,
		Duration: roundDuration(time.Duration(rep.DurationMS * float64(time.Millisecond))).String(),
		Failing:  len(failingResults(rep)),
		Columns:  3 + len(ts),
	}
	if banner := IncompleteBanner(rep); banner != "" {
		p.Incomplete, p.NotRun = banner, notRunText(rep.NotRun)
	}
	if len(ts) > 0 {
		p.Title = "idemproof report: " + strings.Join(ts, " vs ")
	}
	if !rep.Started.IsZero() {
		p.Started = rep.Started.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	for _, r := range failingResults(rep) {
		p.Failures = append(p.Failures, htmlFailure{
			Anchor: anchor("r", r.ScenarioID+"@"+r.Target), ScenarioID: r.ScenarioID, Target: r.Target,
			Message: roomy(r.Message), Verdict: r.Verdict,
		})
	}
	for _, r := range KnownFailures(rep) {
		p.Known = append(p.Known, htmlFailure{
			Anchor: anchor("r", r.ScenarioID+"@"+r.Target), ScenarioID: r.ScenarioID, Target: r.Target,
			Message: roomy(r.Message), Verdict: r.Verdict, Label: knownLabel(r),
		})
	}
	p.Baseline, p.Skipped = rep.Baseline, rep.Skipped
	p.Declare = htmlDeclare(rep)
	if causes := Causes(rep); len(causes) > 0 {
		h := causesHeading(rep, causes)
		p.CausesHeading = capitalized(h)
		for _, c := range causes {
			hc := htmlCause{Count: c.Count(), Target: c.Target, Summary: c.Summary}
			for _, g := range levelGroups(c.Results) {
				lvl := htmlCauseLevel{Level: levelName(g)}
				for _, r := range g {
					lvl.Results = append(lvl.Results, htmlCauseResult{Anchor: anchor("r", r.ScenarioID+"@"+r.Target), ScenarioID: r.ScenarioID, Verdict: r.Verdict})
				}
				hc.Levels = append(hc.Levels, lvl)
			}
			p.Causes = append(p.Causes, hc)
		}
	}
	counts := CountByTarget(rep)
	for _, t := range ts {
		row := htmlCountRow{Target: t, Total: counts[t].Total()}
		for _, v := range verdictOrder {
			row.Cells = append(row.Cells, htmlCount{Verdict: v, N: counts[t][v]})
		}
		p.Counts = append(p.Counts, row)
	}

	byKey := map[[2]string]verdict.Result{}
	for _, r := range rep.Results {
		byKey[[2]string{r.ScenarioID, r.Target}] = r
	}
	groupIndex := map[string]int{}
	for _, id := range scenarioOrder(rep) {
		var first verdict.Result
		for _, t := range ts {
			if r, ok := byKey[[2]string{id, t}]; ok {
				first = r
				break
			}
		}
		sc := htmlScenario{
			ID: id, Anchor: anchor("s", id),
			Description: first.Description, Requirement: first.Requirement, Source: first.Source,
			Level: first.Level, Labels: first.Labels,
		}
		for _, t := range ts {
			r, ok := byKey[[2]string{id, t}]
			cell := htmlCell{ScenarioID: id, Target: t, Present: ok}
			if ok {
				cell.Anchor = anchor("r", id+"@"+t)
				cell.Verdict = r.Verdict
				cell.Message = roomy(r.Message)
				cell.Duration = roundDuration(duration(r)).String()
				cell.Open = Failing(r.Verdict, rep.Strict) || r.Verdict == verdict.Unknown
				for _, name := range sortedKeys(r.Evidence.Categories) {
					cell.Categories = append(cell.Categories, htmlCategory{Name: name, N: r.Evidence.Categories[name], What: verdict.CategoryCounts(name)})
				}
				for _, ex := range r.Evidence.Examples {
					cell.Examples = append(cell.Examples, printable(ex))
				}
				cell.Blames = htmlBlames(r.Evidence)
				// The SVG is built by ResultSVG, which escapes every text it places.
				cell.SVG = template.HTML(ResultSVG(cell.Anchor, r))
				cell.Repeat = RepeatCommand(rep, r)
				cell.Known = r.KnownFailure
			}
			sc.Cells = append(sc.Cells, cell)
		}
		g := group(id)
		i, ok := groupIndex[g]
		if !ok {
			i = len(p.Groups)
			groupIndex[g] = i
			p.Groups = append(p.Groups, htmlGroup{Name: g})
		}
		p.Groups[i].Scenarios = append(p.Groups[i].Scenarios, sc)
	}
	return p
}

// htmlDeclare is the page's "what to declare next" tables.
func htmlDeclare(rep *verdict.Report) []htmlDeclarePlan {
	var out []htmlDeclarePlan
	links := func(rs []verdict.Result) []htmlLink {
		l := make([]htmlLink, len(rs))
		for i, r := range rs {
			l[i] = htmlLink{Anchor: anchor("r", r.ScenarioID+"@"+r.Target), Text: r.ScenarioID}
		}
		return l
	}
	for _, plan := range DeclareNext(rep) {
		h := declareNextHeading(rep, plan)
		hp := htmlDeclarePlan{Heading: capitalized(h)}
		for _, s := range plan.Steps {
			hp.Steps = append(hp.Steps, htmlDeclareStep{Field: s.Field(), What: s.What(), Levels: levelsText(s.Scenarios), Scenarios: links(s.Scenarios)})
		}
		if len(plan.Facts) > 0 {
			hp.Steps = append(hp.Steps, htmlDeclareStep{What: "no declaration: a fact of the target (" + factsText(plan.Facts) + ")",
				Levels: levelsText(plan.Facts), Scenarios: links(plan.Facts)})
		}
		out = append(out, hp)
	}
	return out
}

// htmlBlames renders the blamed attempts of a result for the HTML page. An attempt is
// numbered as its arrow in the diagram is (the proxy journal's seq), never by the
// history's event index, which the page does not show.
func htmlBlames(ev verdict.Evidence) []htmlBlame {
	if ev.Record == nil {
		return nil
	}
	ops := map[int]verdict.Op{}
	for _, op := range ev.Record.History {
		ops[op.Index] = op
	}
	seqOf := map[int]uint64{}
	for seq, op := range newMarks(ev.Record, ev.Blame).opOf {
		seqOf[op.Index] = seq
	}
	keys := newKeyLabels(ev.Record)
	var out []htmlBlame
	for _, bl := range ev.Blame {
		op, ok := ops[bl.Index]
		if !ok {
			continue
		}
		attempt := printable(attemptName(op, keys))
		if seq, drawn := seqOf[op.Index]; drawn {
			attempt = fmt.Sprintf("#%d %s", seq, attempt)
		}
		h := htmlBlame{
			Attempt: attempt,
			Got:     describeAnswer(op), Want: printable(bl.Want),
			Body: bodytext.Pretty(op.Body, bodyBlockBytes), Status: op.Status,
		}
		if bl.Committed != nil {
			h.Committed = bodytext.Pretty(bl.Committed.Body, bodyBlockBytes)
			h.CommittedStatus = bl.Committed.Status
			h.Diff = bodytext.Diff(bl.Committed.Body, op.Body)
			if bl.Committed.Status != op.Status {
				h.Diff = append([]bodytext.Change{{Path: "status", From: fmt.Sprint(bl.Committed.Status), To: fmt.Sprint(op.Status)}}, h.Diff...)
			}
			h.Identical = len(h.Diff) == 0
		}
		out = append(out, h)
	}
	return out
}

// describeAnswer is an answer's status and class, or how it was lost: "201", "409
// (in_flight)", "info (timed-out)".
func describeAnswer(op verdict.Op) string {
	switch {
	case op.Status != 0 && op.Class != "" && op.Class != outcome.Success:
		return fmt.Sprintf("%d (%s)", op.Status, op.Class)
	case op.Status != 0:
		return fmt.Sprint(op.Status)
	case op.Error != "":
		return string(op.Type) + " (" + op.Error + ")"
	}
	return string(op.Type)
}

// anchor turns a scenario ID (and target) into an HTML id: "s-replay-after-503".
func anchor(prefix, s string) string {
	var b strings.Builder
	b.WriteString(prefix)
	b.WriteByte('-')
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}

// VerdictClass is the StyleSheet class that colours a verdict: "v-pass", "v-non-strict",
// "v-n-a".
func VerdictClass(v verdict.Verdict) string {
	return "v-" + strings.TrimPrefix(anchor("", string(v)), "-")
}

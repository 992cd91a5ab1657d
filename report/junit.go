package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/idemproof/idemproof/verdict"
)

// JUnit XML shapes, exported so tests and tools can parse a report back.
type (
	JUnitSuites struct {
		XMLName  xml.Name     `xml:"testsuites"`
		Name     string       `xml:"name,attr"`
		Tests    int          `xml:"tests,attr"`
		Failures int          `xml:"failures,attr"`
		Errors   int          `xml:"errors,attr"`
		Skipped  int          `xml:"skipped,attr"`
		Time     string       `xml:"time,attr"`
		Suites   []JUnitSuite `xml:"testsuite"`
	}
	JUnitSuite struct {
		Name       string          `xml:"name,attr"`
		Tests      int             `xml:"tests,attr"`
		Failures   int             `xml:"failures,attr"`
		Errors     int             `xml:"errors,attr"`
		Skipped    int             `xml:"skipped,attr"`
		Time       string          `xml:"time,attr"`
		Timestamp  string          `xml:"timestamp,attr,omitempty"`
		Properties []JUnitProperty `xml:"properties>property"`
		Cases      []JUnitCase     `xml:"testcase"`
	}
	JUnitProperty struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	}
	JUnitCase struct {
		Name      string          `xml:"name,attr"`
		ClassName string          `xml:"classname,attr"`
		Time      string          `xml:"time,attr"`
		Failure   *JUnitProblem   `xml:"failure,omitempty"`
		Error     *JUnitProblem   `xml:"error,omitempty"`
		Skipped   *JUnitSkipped   `xml:"skipped,omitempty"`
		SystemOut string          `xml:"system-out,omitempty"`
		Props     []JUnitProperty `xml:"properties>property,omitempty"`
	}
	JUnitProblem struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",chardata"`
	}
	JUnitSkipped struct {
		Message string `xml:"message,attr"`
	}
)

// WriteJUnit writes one testsuite per target and one testcase per scenario: FAIL is a
// <failure> carrying the evidence and timeline, UNKNOWN an <error>, N/A <skipped>,
// NON-STRICT a <failure> only under strict, a known failure of the baseline <skipped>.
// Every testcase carries its verdict and level as properties, so PASS and INFO stay
// distinguishable. An incomplete run opens with an XML comment saying so, every suite
// carries complete=false, and each scenario that never started is a testcase with an
// <error> ("not run"), so no CI reads it as passed.
func WriteJUnit(w io.Writer, rep *verdict.Report) error {
	doc := JUnitSuites{Name: "idemproof"}
	var totalSeconds float64
	byTarget := map[string]*JUnitSuite{}
	var order []string
	for _, t := range targets(rep) {
		byTarget[t] = &JUnitSuite{
			Name: t,
			Properties: []JUnitProperty{
				{Name: "seed", Value: fmt.Sprint(rep.Seed)},
				{Name: "strict", Value: fmt.Sprint(rep.Strict)},
				{Name: "tool", Value: rep.Tool},
				{Name: "complete", Value: fmt.Sprint(!rep.Incomplete())},
			},
		}
		if !rep.Started.IsZero() {
			byTarget[t].Timestamp = rep.Started.UTC().Format("2006-01-02T15:04:05")
		}
		order = append(order, t)
	}
	suiteSeconds := map[string]float64{}
	for _, r := range rep.Results {
		s := byTarget[r.Target]
		secs := duration(r).Seconds()
		suiteSeconds[r.Target] += secs
		totalSeconds += secs
		c := JUnitCase{
			Name:      r.ScenarioID,
			ClassName: "idemproof." + r.Target + "." + group(r.ScenarioID),
			Time:      fmt.Sprintf("%.3f", secs),
			SystemOut: r.Message,
			Props: []JUnitProperty{
				{Name: "verdict", Value: string(r.Verdict)},
				{Name: "level", Value: string(r.Level)},
			},
		}
		s.Tests++
		switch {
		case r.KnownFailure:
			// The baseline failed it already: shown, but not red, as the exit status says.
			c.Skipped = &JUnitSkipped{Message: knownLabel(r) + ": " + r.Message}
			s.Skipped++
		case r.Verdict == verdict.NA:
			c.Skipped = &JUnitSkipped{Message: "N/A: " + r.Message}
			s.Skipped++
		case r.Verdict == verdict.Unknown:
			c.Error = &JUnitProblem{Message: r.Message, Type: string(r.Verdict), Text: evidenceText(rep, r)}
			s.Errors++
		case Failing(r.Verdict, rep.Strict):
			c.Failure = &JUnitProblem{Message: r.Message, Type: string(r.Verdict), Text: evidenceText(rep, r)}
			s.Failures++
		}
		s.Cases = append(s.Cases, c)
	}
	for _, nr := range rep.NotRun {
		s := byTarget[nr.Target]
		if s == nil {
			continue
		}
		s.Tests++
		s.Errors++
		s.Cases = append(s.Cases, JUnitCase{
			Name: nr.ScenarioID, ClassName: "idemproof." + nr.Target + "." + group(nr.ScenarioID), Time: "0.000",
			Error: &JUnitProblem{Message: "not run: the run was stopped before this scenario started (" + rep.Interrupted + ")", Type: "NOT-RUN"},
			Props: []JUnitProperty{{Name: "verdict", Value: "NOT-RUN"}},
		})
	}
	for _, t := range order {
		s := byTarget[t]
		s.Time = fmt.Sprintf("%.3f", suiteSeconds[t])
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Errors += s.Errors
		doc.Skipped += s.Skipped
		doc.Suites = append(doc.Suites, *s)
	}
	doc.Time = fmt.Sprintf("%.3f", totalSeconds)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("write junit report: %w", err)
	}
	if banner := IncompleteBanner(rep); banner != "" {
		// "--" may not appear inside an XML comment.
		if _, err := fmt.Fprintf(w, "<!-- %s -->\n", strings.ReplaceAll(xmlSafe(banner), "--", "- -")); err != nil {
			return fmt.Errorf("write junit report: %w", err)
		}
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("write junit report: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// evidenceText is the body of a failure or error element: requirement, categories,
// examples, the blamed attempts, the aligned timeline and the command that repeats the run.
func evidenceText(rep *verdict.Report, r verdict.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", r.Verdict, r.Message)
	fmt.Fprintf(&b, "requirement: %s [%s; %s]\n", r.Requirement, r.Level, r.Source)
	if c := CategoriesText(r.Evidence.Categories); c != "" {
		fmt.Fprintf(&b, "evidence: %s\n", c)
	}
	for _, ex := range r.Evidence.Examples {
		fmt.Fprintf(&b, "- %s\n", printable(ex))
	}
	for _, l := range blameLines(r.Evidence) {
		fmt.Fprintf(&b, "%s\n", printable(l))
	}
	if r.Evidence.Record != nil {
		b.WriteString(ResultTimeline(r))
	}
	fmt.Fprintf(&b, "repeat: %s\n", RepeatCommand(rep, r))
	return xmlSafe(b.String())
}

// xmlSafe drops the characters XML 1.0 cannot carry even escaped (a response body may
// hold any byte).
func xmlSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' || (r >= 0x20 && r != 0xFFFE && r != 0xFFFF) {
			return r
		}
		return -1
	}, s)
}

// group is the scenario ID's group: "replay" for "replay/after-503".
func group(id string) string {
	if i := strings.IndexByte(id, '/'); i > 0 {
		return id[:i]
	}
	return id
}

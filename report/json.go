package report

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/idemproof/idemproof/verdict"
)

// WriteJSON writes the report as indented JSON. The field order is the struct's and map
// keys are sorted, so the output is stable. A zero SchemaVersion is written as
// verdict.ReportSchemaVersion; "complete" is !rep.Incomplete(); durations are written in milliseconds (duration_ms),
// filled from Duration where the runner left DurationMS zero.
func WriteJSON(w io.Writer, rep *verdict.Report) error {
	out := *rep
	if out.SchemaVersion == 0 {
		out.SchemaVersion = verdict.ReportSchemaVersion
	}
	// "complete" is true unless the run recorded why it stopped, so a report built by
	// hand or by another tool does not read as interrupted.
	out.Complete = !rep.Incomplete()
	out.Results = make([]verdict.Result, len(rep.Results))
	for i, r := range rep.Results {
		if r.DurationMS == 0 && r.Duration > 0 {
			r.DurationMS = float64(r.Duration.Microseconds()) / 1000
		}
		out.Results[i] = r
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(&out); err != nil {
		return fmt.Errorf("write json report: %w", err)
	}
	return nil
}

// ReadJSON parses a report written by WriteJSON and refuses a schema version it does not
// know.
func ReadJSON(r io.Reader) (*verdict.Report, error) {
	// A report written before "complete" existed lacks it; it was written by a run that
	// did not know it could be cut short, as complete.
	rep := verdict.Report{Complete: true}
	if err := json.NewDecoder(r).Decode(&rep); err != nil {
		return nil, fmt.Errorf("read json report: %w", err)
	}
	if rep.SchemaVersion != verdict.ReportSchemaVersion {
		return nil, fmt.Errorf("read json report: schema_version %d, this idemproof reads %d",
			rep.SchemaVersion, verdict.ReportSchemaVersion)
	}
	return &rep, nil
}

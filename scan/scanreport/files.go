package scanreport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/idemproof/idemproof/report"
	"github.com/idemproof/idemproof/scan"
)

// The files WriteDir writes: the names check's reports have.
const (
	JSONFile     = report.JSONFile
	MarkdownFile = report.MarkdownFile
	HTMLFile     = report.HTMLFile
)

// WriteJSON writes the report as indented JSON ("kind": "scan"): the target, the seed,
// the headline, and per row the operation (its key, request, ledger, why it was not
// probed) and its cells, each with its check, verdict and evidence.
func WriteJSON(w io.Writer, rep *scan.Report) error {
	out := struct {
		Kind string `json:"kind"`
		*scan.Report
	}{"scan", rep}
	t := *rep.Target
	t.Operations = nil // each is its row's
	r := *rep
	r.Target = &t
	out.Report = &r
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("write json report: %w", err)
	}
	return nil
}

// WriteDir writes report.json, report.md and report.html into dir (created if missing),
// each whole or not at all (report.WriteFileAtomic). It returns the paths written.
func WriteDir(dir string, rep *scan.Report) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create report dir: %w", err)
	}
	var paths []string
	for _, f := range []struct {
		name  string
		write func(io.Writer, *scan.Report) error
	}{{JSONFile, WriteJSON}, {MarkdownFile, WriteMarkdown}, {HTMLFile, WriteHTML}} {
		var buf bytes.Buffer
		if err := f.write(&buf, rep); err != nil {
			return paths, err
		}
		path := filepath.Join(dir, f.name)
		if err := report.WriteFileAtomic(path, buf.Bytes()); err != nil {
			return paths, fmt.Errorf("write %s: %w", path, err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}

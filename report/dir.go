package report

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/idemproof/idemproof/verdict"
)

// File names WriteDir writes.
const (
	JSONFile  = "report.json"
	JUnitFile = "junit.xml"
	HTMLFile  = "report.html"
)

// FileWriters is each file WriteDir writes and the function that renders it, in order.
var FileWriters = []struct {
	Name  string
	Write func(io.Writer, *verdict.Report) error
}{
	{JSONFile, WriteJSON},
	{JUnitFile, WriteJUnit},
	{HTMLFile, WriteHTML},
	{MarkdownFile, WriteMarkdown},
}

// WriteDir writes report.json, junit.xml, report.html and report.md into dir, creating it if
// missing. Each file is rendered in memory, written to a temporary file in dir and
// renamed over the final name, so a reader sees the old file or the new one, never half
// of one. It returns the paths written.
func WriteDir(dir string, rep *verdict.Report) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create report dir: %w", err)
	}
	var paths []string
	for _, w := range FileWriters {
		path := filepath.Join(dir, w.Name)
		if err := WriteFile(path, w.Write, rep); err != nil {
			return paths, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// WriteFile renders rep with write into memory, then writes it to path atomically (a
// temporary file beside it, renamed over it).
func WriteFile(path string, write func(io.Writer, *verdict.Report) error, rep *verdict.Report) error {
	var buf bytes.Buffer
	if err := write(&buf, rep); err != nil {
		return err
	}
	if err := WriteFileAtomic(path, buf.Bytes()); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// WriteFileAtomic writes data to a temporary file beside path, syncs it and renames it
// over path; on any error the temporary file is removed.
func WriteFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

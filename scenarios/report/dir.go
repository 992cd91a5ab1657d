package report

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/idemproof/idemproof/scenarios"
)

// File names WriteDir writes.
const (
	JSONFile  = "report.json"
	JUnitFile = "junit.xml"
	HTMLFile  = "report.html"
)

// WriteDir writes report.json, junit.xml and report.html into dir, creating it if
// missing. Each file is rendered in memory, written to a temporary file in dir and
// renamed over the final name, so a reader sees the old file or the new one, never half
// of one. It returns the paths written.
func WriteDir(dir string, rep *scenarios.Report) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create report dir: %w", err)
	}
	writers := []struct {
		name  string
		write func(io.Writer, *scenarios.Report) error
	}{
		{JSONFile, WriteJSON},
		{JUnitFile, WriteJUnit},
		{HTMLFile, WriteHTML},
	}
	var paths []string
	for _, w := range writers {
		var buf bytes.Buffer
		if err := w.write(&buf, rep); err != nil {
			return paths, err
		}
		path := filepath.Join(dir, w.name)
		if err := writeFileAtomic(path, buf.Bytes()); err != nil {
			return paths, fmt.Errorf("write %s: %w", path, err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// writeFileAtomic writes data to a temporary file beside path, syncs it and renames it
// over path; on any error the temporary file is removed.
func writeFileAtomic(path string, data []byte) error {
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

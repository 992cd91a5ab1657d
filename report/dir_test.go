package report_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/report"
)

func TestWriteDirCreatesTheFolderAndLeavesNoTemporaries(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nested", "reports")
	paths, err := report.WriteDir(dir, sampleReport())
	require.NoError(t, err)
	require.Equal(t, []string{
		filepath.Join(dir, report.JSONFile), filepath.Join(dir, report.JUnitFile), filepath.Join(dir, report.HTMLFile),
		filepath.Join(dir, report.MarkdownFile),
	}, paths)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 4, "no temporary file may remain")
	for _, p := range paths {
		fi, err := os.Stat(p)
		require.NoError(t, err)
		require.Greater(t, fi.Size(), int64(500), p)
	}
	// A second run replaces the files in place.
	_, err = report.WriteDir(dir, sampleReport())
	require.NoError(t, err)
	entries, err = os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 4)
}

func TestWriteDirRejectsAFileInTheWay(t *testing.T) {
	file := filepath.Join(t.TempDir(), "taken")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	_, err := report.WriteDir(file, sampleReport())
	require.ErrorContains(t, err, "create report dir")
}

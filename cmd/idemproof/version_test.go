package main_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/report"
)

func TestVersionPrintsTheBuildInfo(t *testing.T) {
	out, errOut, code := runCLI(t, "version")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "idemproof devel (", "a checkout build is devel")
	require.Contains(t, out, "  version  devel\n")
	require.Contains(t, out, "  go       "+runtime.Version()+"\n")
	require.Regexp(t, `(?m)^  commit   ([0-9a-f]{40}( \(modified\))?|unknown: the binary was built without VCS stamping \(.+\))$`, out,
		"the commit line is there, stamped or not: never silently left out")

	line, _, code := runCLI(t, "--version")
	require.Equal(t, 0, code)
	require.Equal(t, strings.SplitN(out, "\n", 2)[0]+"\n", line, "--version prints the first line of version")
}

func TestReportsCarryTheVersionLine(t *testing.T) {
	line, _, _ := runCLI(t, "--version")
	dir := t.TempDir()
	out, errOut, code := runCLI(t, "check", "--only", "replay/sequential", "--report-dir", dir)
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	f, err := os.Open(filepath.Join(dir, report.JSONFile))
	require.NoError(t, err)
	defer f.Close()
	rep, err := report.ReadJSON(f)
	require.NoError(t, err)
	require.Equal(t, strings.TrimSpace(line), rep.Tool)
}

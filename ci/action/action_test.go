// Package action_test runs the steps of the repository's GitHub Action (action.yml) by
// hand, as a runner would: the scripts get their inputs through the environment and
// write $GITHUB_OUTPUT, $GITHUB_PATH and $GITHUB_STEP_SUMMARY files, which the tests read.
package action_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// runner is one job's environment: its temp folder, the files GitHub provides, and the
// PATH the install step extended.
type runner struct {
	root, temp, output, path, summary string
}

func newRunner(t *testing.T) *runner {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	temp := t.TempDir()
	r := &runner{root: root, temp: temp,
		output: filepath.Join(temp, "output"), path: filepath.Join(temp, "path"), summary: filepath.Join(temp, "summary.md")}
	for _, f := range []string{r.output, r.path, r.summary} {
		require.NoError(t, os.WriteFile(f, nil, 0o644))
	}
	return r
}

// step runs one script of the Action with env and returns its combined output and status.
func (r *runner) step(t *testing.T, script string, env ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(filepath.Join(r.root, "ci", "action", script))
	cmd.Dir = r.temp
	cmd.Env = append(os.Environ(),
		"RUNNER_TEMP="+r.temp, "GITHUB_OUTPUT="+r.output, "GITHUB_PATH="+r.path, "GITHUB_STEP_SUMMARY="+r.summary,
		"ACTION_PATH="+r.root, "GITHUB_ACTION_PATH="+r.root,
		"PATH="+filepath.Join(r.temp, "idemproof-bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	cmd.Env = append(cmd.Env, env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if exit, ok := err.(*exec.ExitError); ok {
		return out.String(), exit.ExitCode()
	}
	require.NoError(t, err)
	return out.String(), 0
}

// outputs is the last value of each key written to $GITHUB_OUTPUT.
func (r *runner) outputs(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile(r.output)
	require.NoError(t, err)
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			out[k] = v
		}
	}
	return out
}

func (r *runner) readSummary(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(r.summary)
	require.NoError(t, err)
	return string(data)
}

func TestActionStepsByHand(t *testing.T) {
	r := newRunner(t)

	// Used at a branch (no tag, no version): install leaves it to the build step.
	out, code := r.step(t, "install", "IDEMPROOF_VERSION=", "ACTION_REF=main", "ACTION_REPOSITORY=idemproof/idemproof")
	require.Equal(t, 0, code, out)
	require.Equal(t, "build", r.outputs(t)["how"])
	path, err := os.ReadFile(r.path)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(r.temp, "idemproof-bin")+"\n", string(path))

	out, code = r.step(t, "build", "IDEMPROOF_VERSION=")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "idemproof devel")

	// A clean run: exit-code 0, the Markdown summary appended to the job summary.
	out, code = r.step(t, "check", "ONLY=replay/sequential,key/missing", "ARGS=--seed 7", "REPORT_DIR=clean",
		"BASELINE="+filepath.Join(r.temp, "no-such-baseline.json"))
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "idemproof check --report-dir clean --only replay/sequential,key/missing --seed 7")
	require.Contains(t, out, "::warning::baseline "+filepath.Join(r.temp, "no-such-baseline.json")+" not found")
	require.Equal(t, "0", r.outputs(t)["exit-code"])
	require.Equal(t, "clean", r.outputs(t)["report-dir"])
	summary := r.readSummary(t)
	require.True(t, strings.HasPrefix(summary, "## idemproof: no failures\n"), summary)
	require.Contains(t, summary, "| reference | 2 | 0 | 0 | 0 | 0 | 0 | 2 |")
	for _, f := range []string{"report.json", "junit.xml", "report.html", "report.md"} {
		require.FileExists(t, filepath.Join(r.temp, "clean", f))
	}

	// A failing run: the script still exits 0 (the upload comes first), exit-code says 1.
	out, code = r.step(t, "check", "ONLY=fingerprint/mismatch", "ARGS=--flaw no-fingerprint --seed 7", "REPORT_DIR=flawed")
	require.Equal(t, 0, code, out)
	require.Equal(t, "1", r.outputs(t)["exit-code"])
	summary = r.readSummary(t)
	require.Contains(t, summary, "## idemproof: 1 failing\n")
	require.Contains(t, summary, "- **FAIL** `fingerprint/mismatch` @ reference+no-fingerprint: ")
	require.Contains(t, summary, "`idemproof check --seed 7 --only fingerprint/mismatch --flaw no-fingerprint`")

	// The failing run's report as the baseline: known failure, exit-code 0.
	out, code = r.step(t, "check", "ONLY=fingerprint/mismatch", "ARGS=--flaw no-fingerprint", "REPORT_DIR=known",
		"BASELINE=flawed/report.json")
	require.Equal(t, 0, code, out)
	require.Equal(t, "0", r.outputs(t)["exit-code"], out)
	require.Contains(t, r.readSummary(t), "### Known failures")

	// Merge mode: the two runs' reports into one set.
	out, code = r.step(t, "check", "MERGE=clean/report.json flawed/report.json", "REPORT_DIR=merged")
	require.Equal(t, 0, code, out)
	require.Equal(t, "1", r.outputs(t)["exit-code"], "the merged set has the FAIL")
	require.FileExists(t, filepath.Join(r.temp, "merged", "report.md"))

	// A usage error is exit-code 2 and still leaves a summary line.
	out, code = r.step(t, "check", "PROFILES=no-such-profile", "REPORT_DIR=bad")
	require.Equal(t, 0, code, out)
	require.Equal(t, "2", r.outputs(t)["exit-code"])
	require.Contains(t, r.readSummary(t), "## idemproof: no report\n")
}

func TestActionProfilesOnePerLineMayHoldSpaces(t *testing.T) {
	r := newRunner(t)
	bin := filepath.Join(r.temp, "idemproof-bin")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	// A stand-in idemproof that prints its arguments one per line.
	require.NoError(t, os.WriteFile(filepath.Join(bin, "idemproof"), []byte("#!/bin/sh\nfor a in \"$@\"; do echo \"arg[$a]\"; done\n"), 0o755))
	out, code := r.step(t, "check", "PROFILES=  my api.yaml\nbuiltin-name\n\n", "STRICT=true", "LABELS=level:safety", "SKIP=race/burst-1000", "SHARD=2/3")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "arg[--profile]\narg[my api.yaml]\narg[--profile]\narg[builtin-name]\n")
	require.Contains(t, out, "arg[--strict]\narg[--label]\narg[level:safety]\narg[--skip]\narg[race/burst-1000]\narg[--shard]\narg[2/3]\n")
	require.Equal(t, "0", r.outputs(t)["exit-code"])
}

func TestActionInstallRefusesAVersionThatIsNotATag(t *testing.T) {
	r := newRunner(t)
	out, code := r.step(t, "install", "IDEMPROOF_VERSION=latest")
	require.Equal(t, 2, code)
	require.Contains(t, out, "::error::idemproof version 'latest' is not a release tag vX.Y.Z")
}

// The failing step names the artifact the job uploaded, under the name it gave it (a
// matrix job's own), and says so when nothing was uploaded; action.yml hands it both.
func TestActionFailNamesTheArtifactAsNamed(t *testing.T) {
	r := newRunner(t)
	out, code := r.step(t, "fail", "CODE=1", "ARTIFACT=idemproof-shard-2", "UPLOAD=true")
	require.Equal(t, 1, code)
	require.Contains(t, out, "::error::idemproof exited 1 (1 FAIL, 2 usage/profile/preflight error, 3 incomplete); see the job summary and the 'idemproof-shard-2' artifact")

	out, code = r.step(t, "fail", "CODE=3", "ARTIFACT=x", "UPLOAD=false")
	require.Equal(t, 3, code)
	require.Contains(t, out, "see the job summary (the reports were not uploaded: upload is 'false')")

	out, code = r.step(t, "fail", "CODE=0")
	require.Equal(t, 0, code, out)
	require.Empty(t, out)

	action, err := os.ReadFile(filepath.Join(r.root, "action.yml"))
	require.NoError(t, err)
	require.Contains(t, string(action), "ARTIFACT: ${{ inputs.artifact-name }}")
	require.Contains(t, string(action), `run: '"$GITHUB_ACTION_PATH/ci/action/fail"'`)
}

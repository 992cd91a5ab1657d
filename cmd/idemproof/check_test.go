package main_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/reference"
	"github.com/idemproof/idemproof/report"
	"github.com/idemproof/idemproof/scenarios"
)

var (
	checkBinaryOnce sync.Once
	checkBinaryPath string
	checkBinaryErr  error
)

// TestMain removes the binary checkBinary built. It is shared by every test that runs the
// CLI, so it lives outside any one test's TempDir, and only the package's end may remove it.
func TestMain(m *testing.M) {
	code := m.Run()
	if checkBinaryPath != "" {
		os.RemoveAll(filepath.Dir(checkBinaryPath))
	}
	os.Exit(code)
}

// checkBinary builds the idemproof command once per test binary: the CLI is tested as a
// user runs it, exit status included.
func checkBinary(t *testing.T) string {
	t.Helper()
	checkBinaryOnce.Do(func() {
		dir, err := os.MkdirTemp("", "idemproof-cli-")
		if err != nil {
			checkBinaryErr = err
			return
		}
		checkBinaryPath = filepath.Join(dir, "idemproof")
		out, err := exec.Command("go", "build", "-o", checkBinaryPath, ".").CombinedOutput()
		if err != nil {
			checkBinaryErr = errors.New(string(out))
		}
	})
	require.NoError(t, checkBinaryErr, "build idemproof")
	return checkBinaryPath
}

// runCLI runs idemproof with args (bounded to a minute) and returns stdout, stderr and
// the exit status.
func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return runCLIInput(t, "", args...)
}

// runCLIInput is runCLI with stdin given ("" is an empty one).
func runCLIInput(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	bin := checkBinary(t)
	cmd := exec.Command(bin, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			require.NoError(t, err)
		}
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("idemproof %s: still running after a minute\n%s", strings.Join(args, " "), stdout.String())
	}
	return stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()
}

func TestCheckPassesAndWritesReports(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "reports")
	out, errOut, code := runCLI(t, "check", "--only", "replay/sequential,replay/after-503", "--only", "key/missing",
		"--seed", "7", "--report-dir", dir)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
	require.Contains(t, out, "idemproof check: 3 scenarios × 1 target(s) [reference], seed 7, strict=false")
	require.Regexp(t, `(?m)^PASS\s+replay/after-503\s+reference\s`, out)
	require.Regexp(t, `(?m)^\s*reference\s+3\s+0\s+0\s+0\s+0\s+0\s+3$`, out)
	require.Contains(t, out, "no failures (seed 7, strict=false)")

	f, err := os.Open(filepath.Join(dir, report.JSONFile))
	require.NoError(t, err)
	defer f.Close()
	rep, err := report.ReadJSON(f)
	require.NoError(t, err)
	require.Equal(t, int64(7), rep.Seed)
	require.Equal(t, []string{"reference"}, rep.Targets)
	require.Len(t, rep.Results, 3)

	junit, err := os.ReadFile(filepath.Join(dir, report.JUnitFile))
	require.NoError(t, err)
	var suites report.JUnitSuites
	require.NoError(t, xml.Unmarshal(junit, &suites))
	require.Equal(t, 3, suites.Tests)
	require.Zero(t, suites.Failures)

	page, err := os.ReadFile(filepath.Join(dir, report.HTMLFile))
	require.NoError(t, err)
	require.Equal(t, 3, strings.Count(string(page), "<svg "))
}

func TestCheckExitsOneOnAFlawItCatches(t *testing.T) {
	out, _, code := runCLI(t, "check", "--flaw", "no-fingerprint", "--only", "fingerprint/mismatch")
	require.Equal(t, 1, code, out)
	require.Regexp(t, `(?m)^FAIL\s+fingerprint/mismatch\s+reference\+no-fingerprint\s`, out)
	require.Contains(t, out, "repeat: idemproof check --seed ")
	require.Contains(t, out, "--only fingerprint/mismatch --flaw no-fingerprint")
}

func TestCheckStrictFailsOnAMissedShould(t *testing.T) {
	out, _, code := runCLI(t, "check", "--flaw", "no-replay-header", "--only", "replay/marker")
	require.Equal(t, 0, code, "a missed SHOULD passes without --strict:\n%s", out)
	require.Regexp(t, `(?m)^NON-STRICT\s+replay/marker\s`, out)

	out, _, code = runCLI(t, "check", "--flaw", "no-replay-header", "--only", "replay/marker", "--strict")
	require.Equal(t, 1, code, out)
}

func TestCheckUsageErrorsExitTwo(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.yaml")
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("name: bad\nbase_url: http://127.0.0.1:1\nexpect:\n  mismatch: 200\n"), 0o644))
	// A profile whose target is down: a closed port on 127.0.0.1.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closedURL := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close())
	down := filepath.Join(t.TempDir(), "down.yaml")
	require.NoError(t, os.WriteFile(down, []byte("name: down\nextends: reference\nbase_url: "+closedURL+"\n"), 0o644))
	closedDSN := "postgres://u:p@" + strings.TrimPrefix(closedURL, "http://") + "/d?sslmode=disable&connect_timeout=5"

	cases := []struct {
		args []string
		want string
	}{
		{[]string{"check", "--only", "no/such-scenario"}, `"no/such-scenario": no scenario matches`},
		{[]string{"check", "--profile", missing}, "nope.yaml"},
		{[]string{"check", "--profile", bad}, "bad.yaml"},
		{[]string{"check", "--profile", "no-such-builtin"}, `built-in profile "no-such-builtin" does not exist`},
		{[]string{"check", "--flaw", "no-such-flaw"}, `--flaw no-such-flaw: no such flaw`},
		{[]string{"check", "--profile", bad, "--flaw", "pin-5xx"}, "--flaw and --store configure the embedded reference server"},
		{[]string{"check", "--store", "mysql://db"}, `--store "mysql://db": want "memory" or a postgres://`},
		{[]string{"check", "--concurrency", "-1"}, "--concurrency -1"},
		{[]string{"check", "stray"}, `unexpected argument "stray"`},
		{[]string{"check", "--no-such-flag"}, "unknown flag -no-such-flag"},
		{[]string{"check", "--profile", down}, "target down: base_url " + closedURL + " is not reachable"},
		{[]string{"check", "--store", closedDSN}, "is PostgreSQL running and the DSN right?"},
		// Waited for (--store-wait), as a replica started beside its database must.
		{[]string{"serve", "--listen", "127.0.0.1:0", "--store-wait", "1s", "--store", closedDSN}, "tries in 1s, --store-wait): connect postgres"},
		{[]string{"serve", "--listen", "127.0.0.1:0", "--store-wait", "0", "--store", closedDSN}, "is PostgreSQL running and the DSN right?"},
		{[]string{"serve", "--store-wait", "-1s"}, "--store-wait must be 0 or a positive duration"},
		// Said at once: trying again would not mend it.
		{[]string{"serve", "--listen", "127.0.0.1:0", "--store", "postgres://u:p@127.0.0.1:1/d?sslmode=bogus"}, "parse postgres dsn"},
	}
	for _, c := range cases {
		out, errOut, code := runCLI(t, c.args...)
		require.Equal(t, 2, code, "%v\nstdout:\n%s\nstderr:\n%s", c.args, out, errOut)
		require.Contains(t, errOut, c.want, "%v", c.args)
	}
}

func TestBuiltinProfileNameWinsOverAFolder(t *testing.T) {
	checkBinary(t) // built from this package's folder, before the working directory changes
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closedURL := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close())
	t.Setenv("IDEMPROOF_BASE_URL", closedURL)
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "reference"), 0o755))
	t.Chdir(dir)

	_, errOut, code := runCLI(t, "check", "--profile", "reference")
	require.Equal(t, 2, code, errOut)
	require.Contains(t, errOut, "target reference: base_url "+closedURL+" is not reachable",
		"the built-in profile was loaded, not the folder")
}

func TestScenariosListsTheCatalogue(t *testing.T) {
	all := scenarios.Catalogue()

	out, _, code := runCLI(t, "scenarios")
	require.Equal(t, 0, code)
	require.Contains(t, out, "ID")
	for _, s := range all {
		require.Regexp(t, `(?m)^`+s.ID+`\s+`+string(s.Level)+`\s`, out)
	}
	require.Contains(t, out, fmt.Sprintf("\n%d scenarios\n", len(all)))

	out, _, code = runCLI(t, "scenarios", "--json", "--only", "replay/*")
	require.Equal(t, 0, code)
	var list []scenarios.Scenario
	require.NoError(t, json.Unmarshal([]byte(out), &list))
	require.NotEmpty(t, list)
	for _, s := range list {
		require.True(t, strings.HasPrefix(s.ID, "replay/"), s.ID)
	}

	out, _, code = runCLI(t, "scenarios", "--markdown")
	require.Equal(t, 0, code)
	require.True(t, strings.HasPrefix(out, "| ID | level |"), out)
	require.Equal(t, len(all)+2, strings.Count(out, "\n"))

	out, _, code = runCLI(t, "scenarios", "--flaws")
	require.Equal(t, 0, code)
	require.Regexp(t, `(?m)^check-then-set\s+race/concurrent-pair\s`, out)
}

// TestCheckRepeatNamesTheProfileFile: a failure against a target from a profile file is
// repeated with that file's path, which --profile can load, not the name inside it.
func TestCheckRepeatNamesTheProfileFile(t *testing.T) {
	srv, err := reference.New(reference.WithTestHooks(true), reference.WithFlaws("no-fingerprint"))
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	dir := filepath.Join(t.TempDir(), "my profiles")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	path := filepath.Join(dir, "refunds.yaml")
	require.NoError(t, os.WriteFile(path, []byte("name: refunds-api\nextends: reference\nbase_url: "+ts.URL+"\n"), 0o644))

	out, _, code := runCLI(t, "check", "--profile", path, "--only", "fingerprint/mismatch")
	require.Equal(t, 1, code, out)
	require.Regexp(t, `(?m)^FAIL\s+fingerprint/mismatch\s+refunds-api\s`, out)
	require.Contains(t, out, "--only fingerprint/mismatch --profile '"+path+"'")
}

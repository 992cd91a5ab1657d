package main_test

import (
	"bufio"
	"bytes"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/reference"
	"github.com/idemproof/idemproof/report"
)

func needCurl(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed: the example shell clients need it")
	}
}

func TestClientCheckAppliesAndPrintsBothFaultKinds(t *testing.T) {
	needCurl(t)
	stdout, stderr, code := runCLI(t, "client-check", "--faults", "409=1,422", "--", "../../examples/clients/good.sh")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	require.Contains(t, stdout, "fault schedule 409=1,422 (seed 1) over 3 operation(s):\n")
	require.Regexp(t, `(?m)^  order-\d: 409, applied to 1 attempt\(s\)$`, stdout)
	require.Regexp(t, `(?m)^  order-\d: 422, applied to 1 attempt\(s\)$`, stdout)
	require.Regexp(t, `(?m)^PASS +client/409-hammered +client +\d`, stdout, "a 409 was dealt and retried after its Retry-After")
	require.Regexp(t, `(?m)^PASS +client/422-retried +client +\d`, stdout, "a 422 was dealt and not retried")
	require.NotRegexp(t, `(?m)^\S+ +client/\S+ +client +0s `, stdout, "durations are real")
	require.Contains(t, stdout, "client-check: no findings (16 checks, seed 1)")
}

func TestClientCheckAgainstAProfileTarget(t *testing.T) {
	needCurl(t)
	ref, err := reference.New(reference.WithTestHooks(true))
	require.NoError(t, err)
	srv := httptest.NewServer(ref)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { ref.Close() })
	dir := t.TempDir()
	profile := filepath.Join(dir, "refunds.yaml")
	require.NoError(t, os.WriteFile(profile, []byte("extends: reference\nname: my-refunds\nbase_url: "+srv.URL+"\nentity: {json: order_id}\n"), 0o644))

	stdout, stderr, code := runCLI(t, "client-check", "--profile", profile, "--report-dir", dir, "--", "../../examples/clients/key-per-attempt.sh")
	require.Equal(t, 1, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	require.Regexp(t, `(?m)^FAIL +client/key-per-attempt `, stdout)
	require.Contains(t, stdout, "operation order-1, its attempts as the proxy saw them:")
	require.Regexp(t, `(?m)^    # +at +took +key +fault +upstream +delivered +class`, stdout)
	require.Regexp(t, `(?m)^    2 +\+\S+ +\S+ +K2 +after-\S+ +201 +\S+ +(info|server_error)`, stdout, "the second attempt went out under a second key")
	require.Contains(t, stdout, "repeat: idemproof client-check --profile "+profile+" --seed 1")

	js, err := os.ReadFile(filepath.Join(dir, "report.json"))
	require.NoError(t, err)
	require.Contains(t, string(js), `"scenario": "client/fault-schedule"`)
	require.Contains(t, string(js), `"class": "server_error"`, "the per-attempt view is in the JSON")
	junit, err := os.ReadFile(filepath.Join(dir, "junit.xml"))
	require.NoError(t, err)
	require.Contains(t, string(junit), `name="client/key-per-attempt"`)
	require.Contains(t, string(junit), "client history:", "the failing operation's attempts are in the failure text")
	html, err := os.ReadFile(filepath.Join(dir, "report.html"))
	require.NoError(t, err)
	require.Contains(t, string(html), "<svg")
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	require.NoError(t, err)
	require.Contains(t, string(md), "`idemproof client-check --profile "+profile+" --seed 1", "the Markdown repeats the client-check run")
	for _, page := range []string{string(md), string(junit), string(html)} {
		require.NotContains(t, page, "idemproof check --seed", "a client-check finding is never repeated with check --only")
	}
}

func TestClientCheckRefusesWhatCouldNeverWork(t *testing.T) {
	dir := t.TempDir()
	clash := filepath.Join(dir, "clash.yaml")
	require.NoError(t, os.WriteFile(clash, []byte("extends: reference\nname: clash\nbase_url: http://127.0.0.1:1\noutcomes: {in_flight: {status: [409, 422]}}\n"), 0o644))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--profile", clash, "--faults", "422", "--", "true"}, `fault "422": the profile clash classifies the answer it would send (status 422) as in_flight, not mismatch`},
		{[]string{"--profile", clash, "--faults", "503", "--", "true"}, "preflight: the target http://127.0.0.1:1 does not answer its ledger (is it running?)"},
		{[]string{"--profile", filepath.Join(dir, "missing.yaml"), "--", "true"}, "--profile: load profile"},
		{[]string{"--faults", "422,teapot", "--", "true"}, `--faults: fault "teapot": unknown fault`},
	} {
		_, stderr, code := runCLI(t, append([]string{"client-check"}, tc.args...)...)
		require.Equal(t, 2, code, stderr)
		require.Contains(t, stderr, tc.want)
	}
}

func TestClientCheckRestartCatchesAKeyFromTheStartTime(t *testing.T) {
	needCurl(t)
	stdout, stderr, code := runCLI(t, "client-check", "--restart", "--", "../../examples/clients/resume.sh")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	require.Regexp(t, `(?m)^PASS +client/key-survives-restart +client +\S+ +3 restarted operation\(s\) resumed under their original key$`, stdout)
	require.Regexp(t, `(?m)^PASS +client/one-vendor-effect-per-operation +client +\S+ +3 operation\(s\), the vendor did each as often as the target$`, stdout)
	require.Contains(t, stdout, "client-check: no findings (17 checks, seed 1)")

	stdout, stderr, code = runCLI(t, "client-check", "--restart", "--", "../../examples/clients/resume.sh", "--start-time-key")
	require.Equal(t, 1, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	require.Regexp(t, `(?m)^FAIL +client/key-survives-restart `, stdout)
	require.Regexp(t, `(?m)^N/A +client/one-effect-per-operation .*under a key that changed across a restart`, stdout)
	require.Contains(t, stdout, "client-check: 1 finding(s)")
	require.Contains(t, stdout, "repeat: idemproof client-check --restart --seed 1")
}

// A signal while the client runs stops it: exit 3 and reports that say the run is
// incomplete; the client killed by the harness is no finding of its own.
func TestClientCheckInterruptedExitsThree(t *testing.T) {
	dir := t.TempDir()
	client := filepath.Join(dir, "slow-client.sh")
	require.NoError(t, os.WriteFile(client, []byte("#!/bin/sh\necho client-started >&2\nexec sleep 120\n"), 0o755))
	cmd := exec.Command(checkBinary(t), "client-check", "--report-dir", filepath.Join(dir, "out"), "--", client)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	errPipe, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	// The client's own output goes to client-check's stderr: once it speaks, it runs.
	var stderr bytes.Buffer
	sc := bufio.NewScanner(errPipe)
	for sc.Scan() && !strings.Contains(sc.Text(), "client-started") {
		stderr.WriteString(sc.Text() + "\n")
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	_, _ = io.Copy(&stderr, errPipe)
	_ = cmd.Wait()
	require.Equal(t, 3, cmd.ProcessState.ExitCode(), "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	require.True(t, strings.HasPrefix(stdout.String(), "INCOMPLETE: the run was stopped (interrupt signal received)"), stdout.String())
	require.Contains(t, stdout.String(), "incomplete: interrupt signal received (exit 3)")
	require.NotContains(t, stdout.String(), "FAIL client/command-exit", "the harness stopped the client: no finding")

	rep := readReportFile(t, filepath.Join(dir, "out", report.JSONFile))
	require.False(t, rep.Complete)
	require.Equal(t, "interrupt signal received", rep.Interrupted)
}

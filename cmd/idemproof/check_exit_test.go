package main_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/reference"
	"github.com/idemproof/idemproof/report"
)

// verdictLine is a progress line: a scenario ran.
var verdictLine = regexp.MustCompile(`(?m)^(PASS|FAIL|NON-STRICT|INFO|N/A|UNKNOWN)\s+[a-z]+/`)

// A signal mid-run stops it promptly: exit 3, and reports that say they are incomplete.
func TestCheckInterruptedExitsThreeWithIncompleteReports(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(checkBinary(t), "check", "--concurrency", "1", "--report-dir", dir)
			stdout, err := cmd.StdoutPipe()
			require.NoError(t, err)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			require.NoError(t, cmd.Start())
			t.Cleanup(func() { _ = cmd.Process.Kill() })

			// Signal once the first scenario has finished: the run is under way, and with
			// one scenario at a time most of the catalogue is still to come.
			var out bytes.Buffer
			firstLine := make(chan struct{})
			copied := make(chan struct{})
			go func() {
				defer close(copied)
				sc := bufio.NewScanner(stdout)
				once := sync.Once{}
				for sc.Scan() {
					out.WriteString(sc.Text() + "\n")
					if verdictLine.MatchString(sc.Text()) {
						once.Do(func() { close(firstLine) })
					}
				}
				_, _ = io.Copy(io.Discard, stdout)
			}()
			select {
			case <-firstLine:
			case <-time.After(time.Minute):
				t.Fatal("no scenario finished within a minute")
			}
			require.NoError(t, cmd.Process.Signal(sig))
			done := make(chan error, 1)
			go func() { <-copied; done <- cmd.Wait() }()
			select {
			case err := <-done:
				var exit *exec.ExitError
				require.True(t, errors.As(err, &exit), "exit status: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), stderr.String())
			case <-time.After(time.Minute):
				t.Fatalf("still running a minute after %v\n%s", sig, out.String())
			}
			require.Equal(t, 3, cmd.ProcessState.ExitCode(), "stdout:\n%s\nstderr:\n%s", out.String(), stderr.String())
			require.Contains(t, stderr.String(), "signal received: stopping")
			summary := out.String()[strings.Index(out.String(), "\nINCOMPLETE: ")+1:]
			require.True(t, strings.HasPrefix(summary, "INCOMPLETE: the run was stopped ("), "the summary opens with it:\n%s", out.String())

			f, err := os.Open(filepath.Join(dir, report.JSONFile))
			require.NoError(t, err)
			defer f.Close()
			raw, err := io.ReadAll(f)
			require.NoError(t, err)
			var doc map[string]any
			require.NoError(t, json.Unmarshal(raw, &doc))
			require.Equal(t, false, doc["complete"], "report.json says complete: false")
			rep, err := report.ReadJSON(bytes.NewReader(raw))
			require.NoError(t, err)
			require.False(t, rep.Complete)
			require.Contains(t, rep.Interrupted, "signal received")
			require.NotEmpty(t, rep.NotRun, "the scenarios never started are listed")
			require.Less(t, len(rep.Results), len(rep.Results)+len(rep.NotRun))
			for _, nr := range rep.NotRun {
				for _, r := range rep.Results {
					require.False(t, r.ScenarioID == nr.ScenarioID && r.Target == nr.Target, "%s both run and not run", nr.ScenarioID)
				}
			}

			junit, err := os.ReadFile(filepath.Join(dir, report.JUnitFile))
			require.NoError(t, err)
			require.Regexp(t, `^<\?xml[^>]*\?>\n<!-- INCOMPLETE: `, string(junit), "junit.xml opens with it")
			require.Contains(t, string(junit), `<property name="complete" value="false">`)
			require.Equal(t, len(rep.NotRun), strings.Count(string(junit), `type="NOT-RUN"`), "each scenario not run is an error")
			page, err := os.ReadFile(filepath.Join(dir, report.HTMLFile))
			require.NoError(t, err)
			body := string(page)[strings.Index(string(page), "<body>"):]
			require.True(t, strings.HasPrefix(body, "<body>\n<div class=\"incomplete\" id=\"incomplete\">INCOMPLETE: "), "report.html opens with it:\n%.300s", body)
		})
	}
}

// writeProfile writes a profile file extending the reference preset and returns its path.
func writeProfile(t *testing.T, name, yaml string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".yaml")
	require.NoError(t, os.WriteFile(path, []byte("name: "+name+"\nextends: reference\nclient_timeout: 1s\n"+yaml), 0o644))
	return path
}

// acceptAndHang accepts connections and never answers.
func acceptAndHang(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	return "http://" + ln.Addr().String()
}

// A target that is not what its profile says stops the run at the preflight, exit 2,
// with the field to fix, before any scenario runs and within client_timeout and a bit.
func TestCheckPreflightStopsAMisdescribedTarget(t *testing.T) {
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<!doctype html><html><body><h1>It works!</h1></body></html>")
	}))
	t.Cleanup(html.Close)
	srv, err := reference.New(reference.WithTestHooks(true))
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	ref := httptest.NewServer(srv)
	t.Cleanup(ref.Close)
	// A middleware that takes only UUID keys refuses any other as a bad request.
	uuidOnly := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if k := r.Header.Get("Idempotency-Key"); k != "" && len(k) != 36 {
			http.Error(w, "Idempotency-Key must be a UUID", http.StatusBadRequest)
			return
		}
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(uuidOnly.Close)

	cases := []struct {
		name, yaml string
		want       []string
	}{
		{"html", "base_url: " + html.URL + "\n", []string{"answered a web page", "check that base_url points at the API", `(text/html) <!doctype html><html><body><h1>It works!</h1></body></html>)`}},
		{"hanging", "base_url: " + acceptAndHang(t) + "\n", []string{"did not answer within client_timeout (1s)", "base_url"}},
		{"ledger-typo", "base_url: " + ref.URL + "\nside_effects: {count: cuont}\n", []string{`answered (application/json) {"data":[],"count":0}, which does not resolve to a number (count cuont: nothing at that path)`, "fix side_effects.count"}},
		{"uuid-only", "base_url: " + uuidOnly.URL + "\n", []string{"answered 400 (text/plain; charset=utf-8) Idempotency-Key must be a UUID to the key idemproof-", "but accepted a UUID key (201)", "set expect.key_format: uuid"}},
		{"ledger-elsewhere", "base_url: " + ref.URL + "\nside_effects: {path: '/v1/refunds?order_id=x{{.Entity}}'}\n", []string{"changed the ledger by 0 (before 0, after 0), not 1", "fix side_effects.path"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeProfile(t, c.name, c.yaml)
			dir := filepath.Join(t.TempDir(), "reports")
			started := time.Now()
			out, errOut, code := runCLI(t, "check", "--profile", path, "--only", "replay/*", "--report-dir", dir)
			elapsed := time.Since(started)
			require.Equal(t, 2, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
			require.Contains(t, errOut, "idemproof check: preflight target "+c.name+": ")
			for _, w := range c.want {
				require.Contains(t, errOut, w)
			}
			require.NotRegexp(t, verdictLine, out, "no scenario ran")
			require.NotContains(t, out, "idemproof check: ", "stopped before the run's header")
			_, err := os.Stat(filepath.Join(dir, report.JSONFile))
			require.True(t, os.IsNotExist(err), "no report for a run that never started")
			// client_timeout is 1s; the bound is no speed goal, only a hang guard: it
			// catches a preflight that waits out the whole catalogue's worth of timeouts
			// (it once took 118 s), with room for a loaded machine's process start.
			require.Less(t, elapsed, 60*time.Second)
		})
	}
}

// A --report-dir that cannot be written is an error before anything runs: the target
// never sees a request.
func TestCheckBadReportDirExitsTwoBeforeRunning(t *testing.T) {
	var hits atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Error(w, "nothing here", http.StatusNotFound)
	}))
	t.Cleanup(ts.Close)
	path := writeProfile(t, "counted", "base_url: "+ts.URL+"\n")
	file := filepath.Join(t.TempDir(), "a-file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))

	for _, dir := range []string{filepath.Join(file, "reports"), file} {
		out, errOut, code := runCLI(t, "check", "--profile", path, "--report-dir", dir)
		require.Equal(t, 2, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
		require.Contains(t, errOut, "idemproof check: --report-dir "+dir+": ")
		require.Contains(t, errOut, "give a folder idemproof can create and write")
		require.Empty(t, out)
		require.Zero(t, hits.Load(), "the target was not contacted")
	}
}

// Any UNKNOWN makes the run incomplete (exit 3); --allow-unknown N tolerates up to N.
// A scenario time limit of 1ns leaves every scenario unjudged.
func TestCheckUnknownExitsThreeUnlessAllowed(t *testing.T) {
	args := []string{"check", "--only", "replay/sequential,key/missing", "--timeout", "1ns"}
	out, errOut, code := runCLI(t, args...)
	require.Equal(t, 3, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
	require.Regexp(t, `(?m)^UNKNOWN\s+replay/sequential\s`, out)
	require.Contains(t, out, "incomplete: 2 UNKNOWN result(s), --allow-unknown 0 (exit 3)")

	out, _, code = runCLI(t, append(args, "--allow-unknown", "1")...)
	require.Equal(t, 3, code, "one allowed, two seen:\n%s", out)

	out, _, code = runCLI(t, append(args, "--allow-unknown", "2")...)
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "2 UNKNOWN result(s), nothing proven for them")

	out, _, code = runCLI(t, append(args, "--allow-unknown", "2", "--strict")...)
	require.Equal(t, 0, code, "--strict turns NON-STRICT into FAIL, UNKNOWN stays incomplete:\n%s", out)

	_, errOut, code = runCLI(t, "check", "--allow-unknown", "-1")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--allow-unknown -1: must be 0 or more")
}

func TestCheckHelpDocumentsTheExitCodes(t *testing.T) {
	out, _, code := runCLI(t, "check", "-h")
	require.Equal(t, 0, code)
	for _, line := range []string{
		"  0  every scenario judged, none failing",
		"  1  a FAIL (under --strict also NON-STRICT)",
		"  2  a usage, profile or preflight error: nothing was run",
		"  3  incomplete: interrupted (SIGINT/SIGTERM; the reports say so), or UNKNOWN results",
		"-allow-unknown",
	} {
		require.Contains(t, out, line)
	}
}

// A declared hook the target does not implement (the reference without --test-hooks)
// stops the run before any scenario, exit 2, naming the hook; with --unproven-hooks na
// the scenarios that use it are N/A, naming it, and the others run.
func TestCheckProvesTheHooksBeforeLeaningOnThem(t *testing.T) {
	srv, err := reference.New(reference.WithTestHooks(false))
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	ref := httptest.NewServer(srv)
	t.Cleanup(ref.Close)
	path := writeProfile(t, "no-hooks", "base_url: "+ref.URL+"\n")
	only := []string{"--only", "recovery/crash-after-commit,replay/sequential"}

	out, errOut, code := runCLI(t, append([]string{"check", "--profile", path}, only...)...)
	require.Equal(t, 2, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
	require.Contains(t, errOut, "idemproof check: preflight target no-hooks: crash.after_commit did not act")
	require.Contains(t, errOut, "--unproven-hooks na")
	require.NotRegexp(t, verdictLine, out, "no scenario ran")

	out, errOut, code = runCLI(t, append([]string{"check", "--profile", path, "--unproven-hooks", "na"}, only...)...)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
	require.Contains(t, errOut, "note: crash.after_commit did not act")
	require.Regexp(t, `(?m)^N/A\s+recovery/crash-after-commit\s+no-hooks\s.*needs crash.after_commit to act`, out)
	require.Regexp(t, `(?m)^PASS\s+replay/sequential\s+no-hooks\s`, out)

	_, errOut, code = runCLI(t, "check", "--unproven-hooks", "maybe", "--only", "replay/sequential")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `--unproven-hooks "maybe": want stop`)
}

package main_test

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// onTerminal runs idemproof under script(1), which gives it a pseudo-terminal.
func onTerminal(t *testing.T, env []string, args ...string) string {
	t.Helper()
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script(1) is not installed: no pseudo-terminal to test with")
	}
	bin := checkBinary(t)
	cmd := exec.Command(script, "-qec", bin+" "+strings.Join(args, " "), os.DevNull)
	cmd.Env = append(os.Environ(), env...)
	out, _ := cmd.CombinedOutput()
	return strings.ReplaceAll(string(out), "\r\n", "\n")
}

func TestProgressCounterOnATerminalOnly(t *testing.T) {
	args := []string{"check", "--only", "replay/sequential,key/missing", "--seed", "1"}
	tty := onTerminal(t, []string{"NO_COLOR=", "TERM=xterm"}, args...)
	require.Regexp(t, `(?m)^\[[12]/2\] \x1b\[32mPASS      \x1b\[0m  `, tty, "counter and colour on a terminal:\n%q", tty)

	noColor := onTerminal(t, []string{"NO_COLOR=1", "TERM=xterm"}, args...)
	require.Regexp(t, `(?m)^\[[12]/2\] PASS        `, noColor)
	require.NotContains(t, noColor, "\x1b[", "NO_COLOR honoured")

	piped, _, code := runCLI(t, args...)
	require.Equal(t, 0, code)
	require.Regexp(t, `(?m)^PASS\s+replay/sequential\s`, piped, "plain lines when not a terminal")
	require.NotContains(t, piped, "[1/2]")
	require.NotContains(t, piped, "\x1b[")
}

func TestEveryCommandHasTheSameHelpStyle(t *testing.T) {
	for _, c := range [][]string{{"check"}, {"serve"}, {"proxy"}, {"scenarios"}, {"client-check"}, {"init"}, {"diff"}, {"version"}, {"vendor"}, {"report", "merge"}, {"report"}} {
		out, errOut, code := runCLI(t, append(c, "-h")...)
		require.Equal(t, 0, code, "%v -h", c)
		require.Empty(t, errOut, "%v -h: help asked for is output, as for idemproof -h", c)
		lines := strings.Split(out, "\n")
		require.GreaterOrEqual(t, len(lines), 3, "%v", c)
		require.Regexp(t, regexp.MustCompile(`^usage: idemproof `+regexp.QuoteMeta(strings.Join(c, " "))+`( |$)`), lines[0], "%v", c)
		require.Empty(t, lines[1], "%v: a blank line after the usage line", c)
		require.NotEmpty(t, lines[2], "%v: then what the command does", c)
	}
	// report has one subcommand: its help is merge's, flags and exit status included.
	out, _, code := runCLI(t, "report", "-h")
	require.Equal(t, 0, code)
	require.Contains(t, out, "-allow-unknown")
	require.Contains(t, out, "Exit status")

	out, _, code = runCLI(t, "help")
	require.Equal(t, 0, code)
	for _, name := range []string{"check", "init", "report", "diff", "version"} {
		require.Regexp(t, `(?m)^  `+name+`\s+\S`, out)
	}
}

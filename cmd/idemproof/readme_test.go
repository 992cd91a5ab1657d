package main_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// readmePath is the README, from this package's folder.
const readmePath = "../../README.md"

// readmeCommand is one command line of the README: in a ```sh block, or after "$ " in a
// transcript block, with the exit statuses its "# exit N" comment names.
type readmeCommand struct {
	line  int    // 1-based line in the README
	text  string // the command, comment removed
	exits []int  // statuses the comment allows; none: it must succeed (0)
	// transcript is the output a transcript block shows after its "$ " line.
	transcript []string
}

// exitComment is "# exit 0", "# exit 1: client/key-per-attempt" or the legend "# exit 0
// all judged, 1 FAIL, 2 bad profile or preflight, 3 incomplete".
var exitComment = regexp.MustCompile(`#\s*exit\s+(.*)$`)

var legendStatus = regexp.MustCompile(`(?:^|,\s*)(\d)\b`)

func readmeCommands(t *testing.T) []readmeCommand {
	t.Helper()
	data, err := os.ReadFile(readmePath)
	require.NoError(t, err)
	var out []readmeCommand
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		fence := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(fence, "```") {
			continue
		}
		lang := strings.TrimPrefix(fence, "```")
		j := i + 1
		for j < len(lines) && strings.TrimSpace(lines[j]) != "```" {
			j++
		}
		block := lines[i+1 : j]
		switch {
		case lang == "sh":
			for k, l := range block {
				if c := strings.TrimSpace(l); c != "" && !strings.HasPrefix(c, "#") {
					out = append(out, parseReadmeCommand(i+2+k, c))
				}
			}
		case lang == "" && len(block) > 0 && strings.HasPrefix(block[0], "$ "):
			c := parseReadmeCommand(i+2, strings.TrimPrefix(block[0], "$ "))
			c.transcript = block[1:]
			out = append(out, c)
		}
		i = j
	}
	require.NotEmpty(t, out, "the README has commands")
	return out
}

func parseReadmeCommand(line int, s string) readmeCommand {
	c := readmeCommand{line: line, text: s}
	if m := exitComment.FindStringSubmatchIndex(s); m != nil {
		for _, d := range legendStatus.FindAllStringSubmatch(s[m[2]:m[3]], -1) {
			n, _ := strconv.Atoi(d[1])
			c.exits = append(c.exits, n)
		}
	}
	if i := strings.Index(s, " #"); i >= 0 {
		c.text = strings.TrimSpace(s[:i])
	}
	return c
}

// readmeNotRun is every README command this test does not run, with why. A command
// that is neither run nor listed here fails the test: a new command in the README is
// either runnable as written or says here why not.
var readmeNotRun = map[string]string{
	"ci/test":                    "the repository's test command: it runs this test",
	"go install ./cmd/idemproof": "installs the binary under test; the test runs the one it built (checkBinary), on the PATH as idemproof",
	"export FIBER_LIFETIME=1m":   "the fiber example's block: examples/fiber-refunds (TestReadmeClientCheckBlockAgainstThisServer) runs it against its server",
	"(cd examples/fiber-refunds && go run . --listen 127.0.0.1:8090) &":                                           "see export FIBER_LIFETIME=1m",
	"idemproof client-check --profile examples/fiber-refunds/profile.yaml -- examples/clients/good.sh":            "see export FIBER_LIFETIME=1m",
	"idemproof client-check --profile examples/fiber-refunds/profile.yaml -- examples/clients/key-per-attempt.sh": "see export FIBER_LIFETIME=1m",
}

// The README's commands run as written, against the embedded reference (and the
// repository's example clients), from a folder where examples/ is the repository's:
// each exits as its "# exit N" comment says (0 without one), a transcript's command
// prints the lines the transcript shows, and no exit status is promised beside `go run`,
// which reports every failure as 1.
func TestReadmeCommandsRunAsWritten(t *testing.T) {
	t.Parallel()
	bin := checkBinary(t)
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	work := t.TempDir()
	pathEnv := filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH")

	listed := map[string]bool{}
	for _, c := range readmeCommands(t) {
		if strings.HasPrefix(c.text, "go run ") {
			require.Empty(t, c.exits, "README line %d: go run reports every failure as exit status 1; show exit codes with the installed binary: %s", c.line, c.text)
		}
		if why, skip := readmeNotRun[c.text]; skip {
			listed[c.text] = true
			t.Logf("README line %d not run (%s): %s", c.line, why, c.text)
			continue
		}
		t.Run(strconv.Itoa(c.line), func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(work, strconv.Itoa(c.line))
			require.NoError(t, os.MkdirAll(dir, 0o755))
			require.NoError(t, os.Symlink(filepath.Join(root, "examples"), filepath.Join(dir, "examples")))
			// `go run ./cmd/idemproof X` is `idemproof X` (the README says so), run
			// here without compiling the command again.
			script := strings.Replace(c.text, "go run ./cmd/idemproof", "idemproof", 1)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "sh", "-c", script)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "PATH="+pathEnv)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			code := 0
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				code = exit.ExitCode()
			} else {
				require.NoError(t, err)
			}
			want := c.exits
			if len(want) == 0 {
				want = []int{0}
				if transcriptFails(c.transcript) {
					want = []int{1}
				}
			}
			require.Contains(t, want, code, "README line %d: %s\n%s", c.line, c.text, out.String())
			for _, l := range c.transcript {
				if shown := transcriptLine(l); shown != nil {
					require.Regexp(t, shown, out.String(), "README line %d: the transcript's line is what the command prints:\n%s", c.line, l)
				}
			}
		})
	}
	for cmd := range readmeNotRun {
		require.True(t, listed[cmd], "readmeNotRun names %q, which the README no longer has", cmd)
	}
}

// transcriptFails reports whether a transcript shows a FAIL: its command exits 1.
func transcriptFails(lines []string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, "FAIL ") {
			return true
		}
	}
	return false
}

// transcriptLine is the pattern a transcript's verdict or repeat line must match in the
// output: the words as shown, any run of spaces between them, any duration; nil for the
// lines it elides ("...") and the timeline rows, whose sequence numbers vary.
func transcriptLine(l string) *regexp.Regexp {
	t := strings.TrimSpace(l)
	isVerdict := regexp.MustCompile(`^(PASS|FAIL|INFO|N/A|UNKNOWN|NON-STRICT)\s`).MatchString(t)
	if !isVerdict && !strings.HasPrefix(t, "repeat: ") {
		return nil
	}
	var parts []string
	for _, w := range strings.Fields(t) {
		if regexp.MustCompile(`^[0-9.]+(ms|µs|s)$`).MatchString(w) {
			parts = append(parts, `[0-9.]+(ms|µs|s)`)
			continue
		}
		parts = append(parts, regexp.QuoteMeta(w))
	}
	return regexp.MustCompile(`(?m)^\s*` + strings.Join(parts, `\s+`) + `\s*$`)
}

// The README's command table names every command the CLI has (from its one registry,
// as `idemproof help` lists it), and no other.
func TestReadmeCommandTableIsTheRegistry(t *testing.T) {
	t.Parallel()
	help, _, code := runCLI(t, "help")
	require.Equal(t, 0, code)
	var registered []string
	for _, m := range regexp.MustCompile(`(?m)^  (\S+)\s+\S`).FindAllStringSubmatch(help, -1) {
		registered = append(registered, m[1])
	}
	require.Contains(t, registered, "check")

	data, err := os.ReadFile(readmePath)
	require.NoError(t, err)
	_, table, found := strings.Cut(string(data), "\n## Commands\n")
	require.True(t, found)
	table, _, _ = strings.Cut(table, "\n## ")
	var documented []string
	for _, m := range regexp.MustCompile("(?m)^\\| `idemproof ([a-z-]+)").FindAllStringSubmatch(table, -1) {
		documented = append(documented, m[1])
	}
	require.ElementsMatch(t, registered, documented, "README's command table (## Commands) and the CLI's commands")
}

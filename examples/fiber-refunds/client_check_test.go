package main

import (
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/clientcheck"
	"github.com/idemproof/idemproof/profile"
)

// readmeFiberBlock is the main README's client-check block for this example: the
// FIBER_LIFETIME it exports and its client-check lines, each with the exit status its
// comment names.
type readmeFiberBlock struct {
	lifetime string
	checks   []readmeCheck
}

type readmeCheck struct {
	line   string
	script string
	faults string
	seed   int64
	exit   int
}

var exitComment = regexp.MustCompile(`#\s*exit\s+(\d)`)

func fiberBlock(t *testing.T) readmeFiberBlock {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	var b readmeFiberBlock
	for _, block := range strings.Split(string(data), "```sh\n")[1:] {
		block, _, _ = strings.Cut(block, "```")
		if !strings.Contains(block, "cd examples/fiber-refunds") || !strings.Contains(block, "client-check") {
			continue
		}
		for _, l := range strings.Split(block, "\n") {
			if v, ok := strings.CutPrefix(l, "export "+LifetimeEnv+"="); ok {
				b.lifetime = strings.Fields(v)[0]
			}
			cmd, comment, _ := strings.Cut(l, " #")
			if !strings.HasPrefix(cmd, "idemproof client-check ") {
				continue
			}
			c := readmeCheck{line: l, seed: 1} // client-check's default seed
			args := strings.Fields(cmd)
			for i, a := range args {
				switch {
				case a == "--faults" && i+1 < len(args):
					c.faults = args[i+1]
				case a == "--seed" && i+1 < len(args):
					c.seed, err = strconv.ParseInt(args[i+1], 10, 64)
					require.NoError(t, err, l)
				case a == "--":
					c.script = args[i+1]
				}
			}
			m := exitComment.FindStringSubmatch("#" + comment)
			require.NotNil(t, m, "README: a client-check line names its exit status: %s", l)
			c.exit, _ = strconv.Atoi(m[1])
			b.checks = append(b.checks, c)
		}
	}
	require.NotEmpty(t, b.checks, "the README's fiber client-check block")
	return b
}

// TestReadmeClientCheckBlockAgainstThisServer runs the README's client-check block for
// this example as written: the FIBER_LIFETIME it exports is the server's key lifetime and
// the profile's retention (one variable, so they agree), and each client-check line exits
// as its comment says — the correct shell client passes, the one that mints a key per
// attempt is caught — twice against the same running server (each run counts only its
// own effects).
func TestReadmeClientCheckBlockAgainstThisServer(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed: the example shell clients need it")
	}
	block := fiberBlock(t)
	require.NotEmpty(t, block.lifetime, "the block exports FIBER_LIFETIME, the window the client's retries need")
	t.Setenv(LifetimeEnv, block.lifetime)
	lifetime, err := envLifetime()
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	app := newApp(lifetime, false)
	go app.Listener(ln) //nolint:errcheck // ends with Shutdown below
	t.Cleanup(func() { _ = app.Shutdown() })
	t.Setenv("FIBER_BASE_URL", "http://"+ln.Addr().String())
	prof, err := profile.Load("profile.yaml")
	require.NoError(t, err)
	require.Equal(t, lifetime, prof.Retention.Std(), "the profile declares the lifetime the server keeps")

	for range 2 {
		for _, c := range block.checks {
			res, err := clientcheck.Run(context.Background(), clientcheck.Config{Profile: prof, Seed: c.seed, FaultSpec: c.faults, Timeout: time.Minute},
				clientcheck.Command([]string{filepath.Join("..", "..", c.script)}, io.Discard, io.Discard))
			require.NoError(t, err, c.line)
			if c.exit == 0 {
				require.NoError(t, res.Err(), c.line)
				require.Equal(t, map[string]int{"order-1": 1, "order-2": 1, "order-3": 1}, res.Observation.Ledger)
				continue
			}
			failed := map[string]bool{}
			for _, f := range res.Findings() {
				failed[f.ScenarioID] = true
			}
			require.True(t, failed[clientcheck.IDKeyPerAttempt], "%s\n%v", c.line, res.Err())
			require.True(t, failed[clientcheck.IDOneEffect], "%s\n%v", c.line, res.Err())
		}
	}
}

// The server's lifetime and the profile's retention come from one variable in every
// doc and profile of this example: no command starts the server with a lifetime of its
// own (it has no such flag), and without FIBER_LIFETIME both are the default, which the
// verdict tests run with.
func TestDocsStartTheServerWithTheProfilesLifetime(t *testing.T) {
	t.Setenv(LifetimeEnv, "")
	prof, err := profile.Load("profile.yaml")
	require.NoError(t, err)
	require.Equal(t, defaultLifetime, prof.Retention.Std())
	t.Setenv(LifetimeEnv, "1m")
	prof, err = profile.Load("profile.yaml")
	require.NoError(t, err)
	require.Equal(t, time.Minute, prof.Retention.Std())

	docs, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	require.NoError(t, err)
	docs = append(docs, filepath.Join("..", "..", "README.md"), "profile.yaml", "profile-uuid.yaml", "main.go")
	started := 0
	for _, path := range docs {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		for _, l := range strings.Split(string(data), "\n") {
			if strings.Contains(l, "go run . --listen") {
				started++
				require.NotContains(t, l, "--lifetime", "%s: the lifetime is FIBER_LIFETIME's, which the profile reads too: %s", path, l)
			}
		}
	}
	require.GreaterOrEqual(t, started, 4, "the docs that start this server were read")
}

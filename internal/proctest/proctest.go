// Package proctest counts processes for tests that must leave none behind: a server
// that was stopped, killed or failed its start, with everything it started.
//
// It reads /proc (Linux); elsewhere the tests that use it are skipped. A zombie is dead
// (a process waiting for whoever reaps orphans, which in a container may be slow or never)
// and is not counted.
package proctest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// LiveWithEnv lists the live processes whose environment holds s (a marker the test put
// in the server's environment: its children inherit it, wherever their process group
// went).
func LiveWithEnv(t testing.TB, s string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc to count processes in")
	}
	var live []string
	for _, e := range entries {
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !strings.Contains(string(env), s) {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ...: comm may hold spaces, so read after the last ')'.
		st := string(stat)
		if f := strings.Fields(st[strings.LastIndexByte(st, ')')+1:]); len(f) > 0 && f[0] != "Z" {
			live = append(live, st)
		}
	}
	return live
}

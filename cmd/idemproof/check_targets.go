package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/idemproof/idemproof/internal/embedded"
	"github.com/idemproof/idemproof/internal/suggest"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/reference"
	"github.com/idemproof/idemproof/scenarios"
)

// embeddedName is the --profile value that selects the embedded reference server; it is
// also what `idemproof check` runs with no --profile.
const embeddedName = "embedded"

// targetSet is the profiles of one run and the embedded servers to stop afterwards.
type targetSet struct {
	profiles []*profile.Profile
	closers  []func() error
}

func (t *targetSet) Close() {
	for _, c := range t.closers {
		c()
	}
}

// resolveTargets turns the --profile values into profiles, starting the embedded
// reference for "embedded" (or when no --profile is given). --flaw and --store configure
// that embedded server and are refused when it is not part of the run.
func resolveTargets(ctx context.Context, profiles, flaws []string, store string) (*targetSet, error) {
	if len(profiles) == 0 {
		profiles = []string{embeddedName}
	}
	wantEmbedded := false
	for _, p := range profiles {
		if p == embeddedName {
			wantEmbedded = true
		}
	}
	if !wantEmbedded && (len(flaws) > 0 || store != "") {
		return nil, fmt.Errorf("--flaw and --store configure the embedded reference server; add --profile %s or drop them", embeddedName)
	}
	if err := checkFlaws(flaws); err != nil {
		return nil, err
	}
	if store != "" && store != embedded.StoreMemory && !embedded.IsPostgresDSN(store) {
		return nil, fmt.Errorf("--store %q: want %q or a postgres://user:pass@host:port/db DSN", store, embedded.StoreMemory)
	}
	set := &targetSet{}
	seen := map[string]string{}
	for _, arg := range profiles {
		var p *profile.Profile
		if arg == embeddedName {
			tgt, err := embedded.Start(ctx, embedded.Config{Flaws: flaws, Store: store})
			if err != nil {
				set.Close()
				return nil, fmt.Errorf("start embedded reference: %w", err)
			}
			set.closers = append(set.closers, tgt.Close)
			p = tgt.Profile
		} else {
			var err error
			p, err = loadProfile(arg)
			if err != nil {
				set.Close()
				return nil, fmt.Errorf("--profile %s: %v", arg, err)
			}
		}
		if prev, dup := seen[p.Name]; dup {
			set.Close()
			return nil, fmt.Errorf("--profile %s and --profile %s both name the target %q; give each profile its own name", prev, arg, p.Name)
		}
		seen[p.Name] = arg
		set.profiles = append(set.profiles, p)
	}
	// The store fault points (profile store:) run from here to the end of the command,
	// so the preflight and every repeat go through the same point.
	closeStores, err := scenarios.StartStorePoints(set.profiles)
	if err != nil {
		set.Close()
		return nil, err
	}
	set.closers = append([]func() error{closeStores}, set.closers...)
	return set, nil
}

// loadProfile reads a profile file, or a built-in profile by name when no such file
// exists and the value does not look like a path. Only a regular file shadows a built-in
// name: in a checkout, "reference" is also a folder.
func loadProfile(arg string) (*profile.Profile, error) {
	fi, err := os.Stat(arg)
	isFile := err == nil && fi.Mode().IsRegular()
	if isFile || strings.ContainsAny(arg, `/\`) || strings.HasSuffix(arg, ".yaml") || strings.HasSuffix(arg, ".yml") {
		return profile.Load(arg)
	}
	if profile.IsPreset(arg) {
		return nil, fmt.Errorf("%q is an expectation preset, not a target: name it in your own profile with extends: %s (idemproof init writes a first one)", arg, arg)
	}
	p, err := profile.Builtin(arg)
	if err != nil {
		if hint := suggest.DidYouMean(arg, append(profile.BuiltinNames(), embeddedName)); hint != "" {
			return nil, fmt.Errorf("built-in profile %q does not exist%s (built-in: %s; or a file path)", arg, hint, strings.Join(profile.BuiltinNames(), ", "))
		}
		return nil, err
	}
	startFixtureWithThisBinary(p)
	return p, nil
}

// startFixtureWithThisBinary makes a built-in profile of idemproof's own stdio fixture
// (mcp.command: idemproof serve --mcp --stdio …) start this very binary: under `go run`
// no idemproof is on the PATH, and an installed one may be another version.
func startFixtureWithThisBinary(p *profile.Profile) {
	if !p.IsStdio() || p.MCP == nil || len(p.MCP.Command) == 0 || p.MCP.Command[0] != "idemproof" {
		return
	}
	if self, err := os.Executable(); err == nil {
		p.MCP.Command = append([]string{self}, p.MCP.Command[1:]...)
	}
}

// checkFlaws refuses a --flaw the reference does not have, naming the closest one, before
// anything starts.
func checkFlaws(flaws []string) error {
	var names []string
	for _, f := range reference.Flaws() {
		names = append(names, f.Name)
	}
	for _, f := range flaws {
		if slices.Contains(names, f) {
			continue
		}
		return fmt.Errorf("--flaw %s: no such flaw%s (idemproof scenarios --flaws lists them)", f, suggest.DidYouMean(f, names))
	}
	return nil
}

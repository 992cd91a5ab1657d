package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/idemproof/idemproof/scenarios/shard"
	"github.com/idemproof/idemproof/storm"
)

// runStorm is `idemproof storm`: a seeded fault storm against one target.
func runStorm(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("storm", "[flags]",
		"Runs a seeded fault storm against one target (its profile: an HTTP API or an MCP tool server over\nStreamable HTTP; default the embedded reference):\n"+
			"--ops logical operations by --clients concurrent clients with the correct retry policy, a mix of\n"+
			"after-upstream faults, duplicate deliveries, same-key concurrency and, with store:, store outages;\n"+
			"judged per operation from the ledger and the proxy journal. A finding is shrunk to the smallest\n"+
			"schedule that still fails, printed with the command that repeats it. Exit status: 0 nothing found,\n"+
			"every operation ended; 1 duplicated, lost, fabricated or differing; 2 a usage, profile or\n"+
			"preflight error; 3 incomplete (operations that did not end, or the --duration ran out).", stderr)
	profileArg := fs.String("profile", embeddedName, "the target's profile (a file or a built-in name), or \"embedded\" for the embedded reference")
	var flaws listFlag
	fs.Var(&flaws, "flaw", "run the embedded reference with this flaw (repeatable; see idemproof scenarios --flaws)")
	store := fs.String("store", "", "the embedded reference's store: memory (default) or a postgres:// DSN (its key store then sits behind a store fault point)")
	ops := fs.Int("ops", storm.DefaultOps, "logical operations of the whole storm")
	clients := fs.Int("clients", storm.DefaultClients, "operations run at once")
	faults := fs.Float64("faults", 0.30, "share of operations whose first answer is lost after the target committed")
	seed := fs.Int64("seed", 0, "deals the schedules (0: picked and printed)")
	duration := fs.Duration("duration", storm.DefaultDuration, "bound on the whole storm")
	shardFlag := fs.String("shard", "", "run part I of N of the operations (I/N), with fresh entities; merge the shards' --json with idemproof report merge")
	scheduleFlag := fs.String("schedule", "", "give every operation this schedule (a shrunk finding's: plain, after-503, duplicate, copies=2+hold, outage=down, …)")
	noShrink := fs.Bool("no-shrink", false, "do not shrink findings")
	jsonOut := fs.String("json", "", "write the storm report (JSON) to this file, or - for stdout")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (flags only)", fs.Arg(0))
	}
	cfg := storm.Config{Ops: *ops, Clients: *clients, Seed: *seed, Duration: *duration, NoShrink: *noShrink, Mix: storm.Mix{FaultRate: *faults}}
	switch {
	case *ops < 1:
		return fmt.Errorf("--ops %d: want 1 or more", *ops)
	case *clients < 1:
		return fmt.Errorf("--clients %d: want 1 or more", *clients)
	case *faults <= 0 || *faults >= 1:
		return fmt.Errorf("--faults %v: want a share between 0 and 1, e.g. 0.30", *faults)
	}
	if *shardFlag != "" {
		part, err := shard.Parse(*shardFlag)
		if err != nil {
			return fmt.Errorf("--shard %w", err)
		}
		cfg.Shard, cfg.Shards = part.Index, part.Count
	}
	if *scheduleFlag != "" {
		s, err := storm.ParseSchedule(*scheduleFlag)
		if err != nil {
			return fmt.Errorf("--schedule: %w", err)
		}
		cfg.Schedule = &s
	}
	if cfg.Seed == 0 {
		cfg.Seed = time.Now().UnixNano()
	}
	targets, err := resolveTargets(ctx, []string{*profileArg}, flaws, *store)
	if err != nil {
		return err
	}
	defer targets.Close()
	cfg.Profile = targets.profiles[0]
	cfg.Command = stormCommand(*profileArg, flaws, *store)
	if err := cfg.Check(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "idemproof storm: %s, %d operations, %d clients, seed %d\n", cfg.Profile.Name, cfg.Ops, cfg.Clients, cfg.Seed)
	cfg.Progress = progressLine(stdout)
	rep, err := storm.Run(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	rep.WriteText(stdout)
	if err := writeStormJSON(*jsonOut, stdout, rep); err != nil {
		return err
	}
	return stormExit(rep)
}

// progressLine prints how far the storm is, at most every two seconds and at its end.
func progressLine(w io.Writer) func(storm.Progress) {
	var mu sync.Mutex
	var last time.Time
	return func(p storm.Progress) {
		mu.Lock()
		defer mu.Unlock()
		if p.Done < p.Total && time.Since(last) < 2*time.Second {
			return
		}
		last = time.Now()
		fmt.Fprintf(w, "storm: %d/%d operations, %d attempts, %s\n", p.Done, p.Total, p.Attempts, p.Elapsed.Round(100*time.Millisecond))
	}
}

func writeStormJSON(path string, stdout io.Writer, rep *storm.Report) error {
	if path == "" {
		return nil
	}
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	if path == "-" {
		_, err := stdout.Write(data)
		return err
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("--json %s: %w", path, err)
		}
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("--json %s: %w", path, err)
	}
	fmt.Fprintf(stdout, "\nreport: %s\n", path)
	return nil
}

// stormExit: 1 on a safety finding, 3 when operations did not end or the storm was cut
// short, 0 otherwise.
func stormExit(rep *storm.Report) error {
	switch {
	case !rep.Safe():
		return errExitFailure
	case !rep.Complete || rep.Counts[storm.CatFailed] > 0:
		return errExitIncomplete
	}
	return nil
}

// mergeStormReports is `report merge` over storm reports.
func mergeStormReports(paths []string, jsonOut string, stdout io.Writer) error {
	var reps []*storm.Report
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rep, err := storm.ReadReport(data)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		reps = append(reps, rep)
	}
	merged, err := storm.Merge(reps, 0)
	if err != nil {
		return err
	}
	merged.WriteText(stdout)
	if err := writeStormJSON(jsonOut, stdout, merged); err != nil {
		return err
	}
	return stormExit(merged)
}

// stormReports reports whether every path is a storm report (none: a check's; a mix is
// an error).
func stormReports(paths []string) (bool, error) {
	n := 0
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return false, err
		}
		if storm.IsReport(data) {
			n++
		}
	}
	if n > 0 && n < len(paths) {
		return false, errors.New("the reports mix a storm's with a check's: merge the shards of one command")
	}
	return n > 0, nil
}

// stormCommand is the command line that names the storm's target, for the repeat
// command of a shrunk finding.
func stormCommand(profileArg string, flaws []string, store string) string {
	cmd := "idemproof storm"
	if profileArg != embeddedName {
		cmd += " --profile " + profileArg
	}
	for _, f := range flaws {
		cmd += " --flaw " + f
	}
	if store != "" {
		cmd += " --store '" + store + "'"
	}
	return cmd
}

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/idemproof/idemproof/clientcheck"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/report"
	"github.com/idemproof/idemproof/report/rounds"
	"github.com/idemproof/idemproof/verdict"
)

// runClientCheck runs a client command against the reference server behind the fault
// proxy and checks its retry policy: exit 0 clean, 1 on findings, 2 on usage errors, 3
// when interrupted.
func runClientCheck(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("client-check", "[--profile my-api.yaml] [flags] -- <command> [args...]", fmt.Sprintf(
		"Runs the command against the profile's target (default: the embedded reference refund server)\n"+
			"behind the fault proxy, then checks each logical operation (the profile's entity): one side\n"+
			"effect, one key re-sent on every retry, no mismatch (422) retried unchanged, in-flight answers\n"+
			"(409) and every other answer asking for a wait retried after it, an attempt timeout inside\n"+
			"client_patience, lost responses resolved or reported unknown.\n"+
			"The command gets %s (the proxy), %s, %s, %s or %s, %s, %s, %s and %s; an MCP agent\n"+
			"over stdio gets %s (a JSON argv to start as its server) and %s.\n"+
			"Exit status: 0 no findings, 1 findings, 2 a usage, profile or schedule error or a target\n"+
			"that does not answer its ledger, 3 interrupted (SIGINT/SIGTERM; a FAIL seen before still exits 1).",
		clientcheck.EnvBaseURL, clientcheck.EnvOperationURL, clientcheck.EnvOperationBody, clientcheck.EnvKeyHeader,
		clientcheck.EnvKeyField, clientcheck.EnvEntity, clientcheck.EnvOutcomeFile, clientcheck.EnvAdminURL, clientcheck.EnvMCPEndpoint,
		clientcheck.EnvMCPCommand, clientcheck.EnvMCPTool), stderr)
	profilePath := fs.String("profile", "", "the target the client calls, as a profile file (default: the embedded reference refund server)")
	faults := fs.String("faults", "",
		"fault kinds dealt over the operations, on each key's first attempt: hold[=DUR],reset[=P],close[=P],409[=SECS],422,429[=SECS],503[=SECS],502,504,should-retry=false,restart,kill (stdio), none, or @FILE (JSON rules, with headers:); default "+clientcheck.DefaultFaultSpec+", over stdio "+clientcheck.DefaultStdioFaultSpec)
	mcpFixture := fs.String("mcp", "", "without --profile: run the command against the MCP fixture (idemproof serve --mcp) instead of the HTTP reference, over stdio (the command gets "+clientcheck.EnvMCPCommand+", a JSON argv to start as its MCP server) or http (it gets "+clientcheck.EnvMCPEndpoint+")")
	seed := fs.Int64("seed", 1, "seed of the fault probabilities (same seed, same request order: same faults)")
	reportDir := fs.String("report-dir", "", "write report.json, junit.xml, report.html and report.md into this folder")
	outcomes := fs.String("outcomes", "", "outcome file the client writes (default: a temporary file); exported as "+clientcheck.EnvOutcomeFile)
	timeout := fs.Duration("timeout", clientcheck.DefaultTimeout, "kill the client command after this long")
	format := fs.String("format", "console", "console | json (the report on stdout)")
	restart := fs.Bool("restart", false, "kill the command (its whole process group) right after every attempt whose response the proxy lost, and start it again with the same environment and "+clientcheck.EnvStateDir+" (once per operation)")
	stateDir := fs.String("state-dir", "", "the state folder exported as "+clientcheck.EnvStateDir+" (default: a temporary folder, removed after the run)")
	repeat := fs.Int("repeat", 1, "run the client this many times (seeds --seed, --seed+1, …: other faults on other operations) and report each check's most telling verdict with how often each came; any run's finding is a finding")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	argv := fs.Args()
	if len(argv) == 0 {
		fs.Usage()
		return fmt.Errorf("no client command: give it after --, e.g. idemproof client-check -- ./my-client.sh")
	}
	if _, err := exec.LookPath(argv[0]); err != nil {
		return fmt.Errorf("client command %q: %w (give a path or a command on $PATH)", argv[0], err)
	}
	if *format != "console" && *format != "json" {
		return fmt.Errorf("--format %q: use console or json", *format)
	}
	if *timeout <= 0 {
		return fmt.Errorf("--timeout %s: must be a positive duration, e.g. 2m", *timeout)
	}
	if *repeat < 1 || *repeat > maxRepeat {
		return fmt.Errorf("--repeat %d: must be 1 to %d", *repeat, maxRepeat)
	}
	if *repeat > 1 && *stateDir != "" {
		// A run's saved state (a key kept for a restart) would reach the next run's
		// operations: each run gets a fresh temporary folder instead.
		return fmt.Errorf("--state-dir with --repeat %d: each run needs a fresh state folder; leave --state-dir out (each run then gets its own temporary one)", *repeat)
	}
	var prof *profile.Profile
	if *profilePath != "" {
		p, err := profile.Load(*profilePath)
		if err != nil {
			return fmt.Errorf("--profile: %w", err)
		}
		prof = p
	}
	switch {
	case *mcpFixture != "" && prof != nil:
		return fmt.Errorf("--mcp %s runs the command against the MCP fixture: leave out --profile (or --mcp)", *mcpFixture)
	case *mcpFixture != "" && *mcpFixture != "stdio" && *mcpFixture != "http":
		return fmt.Errorf("--mcp %q: use stdio or http", *mcpFixture)
	}
	if *faults == "" {
		*faults = clientcheck.DefaultFaultSpec
		if *mcpFixture == "stdio" || (prof != nil && prof.IsStdio()) {
			*faults = clientcheck.DefaultStdioFaultSpec // a pipe carries no 503
		}
	}
	if _, err := clientcheck.ParseSchedule(*faults); err != nil {
		return fmt.Errorf("--faults: %w", err)
	}
	// Over stdio the command starts `idemproof proxy --stdio --attach ADDR` as its
	// server: this very program.
	var shim []string
	if exe, err := os.Executable(); err == nil {
		shim = []string{exe, "proxy", "--stdio"}
	}

	// The client's own output goes to stderr so stdout stays the report.
	var rep *verdict.Report
	var last *clientcheck.Result
	combined := rounds.Rounds{UndecidedIsFinding: true} // client-check's rule: undecided is a finding
	interrupted := false
	var findingSeeds []int64
	for i := range *repeat {
		runSeed := *seed + int64(i)
		res, err := clientcheck.Run(ctx, clientcheck.Config{
			Profile:     prof,
			FaultSpec:   *faults,
			Seed:        runSeed,
			Timeout:     *timeout,
			OutcomeFile: *outcomes,
			Restart:     *restart,
			StateDir:    *stateDir,
			MCP:         *mcpFixture,
			ShimCommand: shim,
		}, clientcheck.Command(argv, stderr, stderr))
		if err != nil {
			if i > 0 {
				return fmt.Errorf("run %d of %d, seed %d: %w", i+1, *repeat, runSeed, err)
			}
			return err
		}
		last, rep = res, &res.Report
		interrupted = markInterrupted(ctx, rep)
		rep.Repeat = repeatClientCheck(*profilePath, *mcpFixture, runSeed, 1, *faults, *restart, argv) // the reports repeat the run, never `idemproof check --only client/…`
		if len(res.Findings()) > 0 {
			findingSeeds = append(findingSeeds, runSeed)
		}
		if *repeat > 1 {
			if err := combined.Add(rep); err != nil {
				return err
			}
			if *format != "json" {
				printClientCheckRun(stdout, res, fmt.Sprintf("run %d of %d, seed %d", i+1, *repeat, runSeed))
			}
		}
		if interrupted {
			break // the runs not started are not run at all
		}
	}
	if *repeat > 1 {
		rep = combined.Report()
		rep.Repeat = repeatClientCheck(*profilePath, *mcpFixture, *seed, *repeat, *faults, *restart, argv)
	}
	if *reportDir != "" {
		if _, err := report.WriteDir(*reportDir, rep); err != nil {
			return fmt.Errorf("write reports: %w", err)
		}
	}
	if *format == "json" {
		if err := report.WriteJSON(stdout, rep); err != nil {
			return fmt.Errorf("write report: %w", err)
		}
	} else {
		if *repeat > 1 {
			printRepeatedClientCheck(stdout, rep, findingSeeds)
		} else {
			printClientCheck(stdout, last, rep.Repeat)
		}
		if *reportDir != "" {
			fmt.Fprintf(stdout, "reports: %s\n", *reportDir)
		}
	}
	if interrupted { // a FAIL seen before the signal still wins: it is definite
		for _, r := range rep.Results {
			if r.Verdict == verdict.Fail {
				return errExitFailure
			}
		}
		fmt.Fprintf(stdout, "\nincomplete: %s (exit 3)\n", rep.Interrupted)
		return errExitIncomplete
	}
	if len(clientcheck.Findings(rep.Results, false)) > 0 {
		return errExitFailure
	}
	return nil
}

// printRepeatedClientCheck prints the combined checks of a repeated run (each run's own
// findings and attempts were printed as it ended) and which seeds had findings.
func printRepeatedClientCheck(w io.Writer, rep *verdict.Report, findingSeeds []int64) {
	fmt.Fprintf(w, "\ncombined over %s:\n", report.SeedText(rep))
	for _, r := range rep.Results {
		if r.ScenarioID != clientcheck.IDFaultSchedule {
			report.WriteLine(w, r)
		}
	}
	if len(findingSeeds) == 0 {
		fmt.Fprintf(w, "\nclient-check: no findings in any run (%s)\n", report.SeedText(rep))
		return
	}
	seeds := make([]string, len(findingSeeds))
	for i, s := range findingSeeds {
		seeds[i] = fmt.Sprint(s)
	}
	fmt.Fprintf(w, "\nclient-check: findings in %d of %d runs (seeds %s); each run's repeat line is above it\n", len(findingSeeds), rep.Runs, strings.Join(seeds, ", "))
}

// markInterrupted records a run stopped by SIGINT or SIGTERM in rep: incomplete, with
// why, and the client's exit no finding of its own, since the harness killed it. The
// other checks keep their verdicts: what the client did before the signal was observed.
func markInterrupted(ctx context.Context, rep *verdict.Report) bool {
	if ctx.Err() == nil {
		return false
	}
	rep.Complete = false
	rep.Interrupted = context.Cause(ctx).Error()
	for i, r := range rep.Results {
		if r.ScenarioID == clientcheck.IDCommandSucceeded && r.Verdict == verdict.Fail {
			rep.Results[i].Verdict = verdict.Unknown
			rep.Results[i].Message = "the run was interrupted (" + rep.Interrupted + "): the client was stopped before it finished"
		}
	}
	return true
}

// printClientCheck prints the fault schedule as applied, one line per check and
// operation, then the evidence of every finding with its operation's attempts, then the
// command that repeats the run.
func printClientCheck(w io.Writer, res *clientcheck.Result, repeat string) {
	rep := &res.Report
	if banner := report.IncompleteBanner(rep); banner != "" {
		fmt.Fprintf(w, "%s\n\n", banner)
	}
	s := res.Observation.Schedule
	fmt.Fprintf(w, "fault schedule %s (seed %d) over %d operation(s):\n", s.Spec, s.Seed, len(s.Assignments))
	for _, line := range clientcheck.ScheduleLines(res.Observation) {
		fmt.Fprintf(w, "  %s\n", line)
	}
	for _, r := range res.Observation.Restarts {
		fmt.Fprintf(w, "  restarted the client after %s's attempt under key %s\n", r.Operation, r.Key)
	}
	fmt.Fprintln(w)
	for _, r := range rep.Results {
		if r.ScenarioID != clientcheck.IDFaultSchedule {
			report.WriteLine(w, r)
		}
	}
	findings := printFindings(w, res)
	if len(findings) == 0 {
		checks := 0
		for _, r := range rep.Results {
			if !strings.HasPrefix(r.ScenarioID, clientcheck.OperationIDPrefix) && r.ScenarioID != clientcheck.IDFaultSchedule {
				checks++
			}
		}
		fmt.Fprintf(w, "\nclient-check: no findings (%d checks, seed %d)\n", checks, rep.Seed)
		return
	}
	fmt.Fprintf(w, "\nclient-check: %d finding(s) (seed %d)\n  repeat: %s\n", len(findings), rep.Seed, repeat)
}

// printClientCheckRun prints one run of a repeated client-check in brief: a line for the
// run, and only its findings in full, with their attempts and the line that repeats it.
func printClientCheckRun(w io.Writer, res *clientcheck.Result, title string) {
	s := res.Observation.Schedule
	fmt.Fprintf(w, "%s: fault schedule %s over %d operation(s)", title, s.Spec, len(s.Assignments))
	if len(res.Observation.Restarts) > 0 {
		fmt.Fprintf(w, ", %d restart(s)", len(res.Observation.Restarts))
	}
	if banner := report.IncompleteBanner(&res.Report); banner != "" {
		fmt.Fprintf(w, "\n%s", banner)
	}
	findings := clientcheck.Findings(res.Report.Results, false)
	if len(findings) == 0 {
		fmt.Fprintln(w, ": no findings")
		return
	}
	fmt.Fprintf(w, ": %d finding(s)\n", len(findings))
	printFindings(w, res)
	fmt.Fprintf(w, "  repeat: %s\n", res.Report.Repeat)
}

// printFindings prints every finding with its evidence and, once per operation, the
// operation's attempts as the proxy saw them; it returns the findings.
func printFindings(w io.Writer, res *clientcheck.Result) []verdict.Result {
	findings := clientcheck.Findings(res.Report.Results, false)
	shown := map[string]bool{} // one attempt table per operation, however many findings name it
	for _, r := range findings {
		fmt.Fprintf(w, "\n%s %s: %s\n", r.Verdict, r.ScenarioID, r.Message)
		fmt.Fprintf(w, "  requirement: %s [%s; %s]\n", r.Requirement, r.Level, r.Source)
		for _, ex := range r.Evidence.Examples {
			fmt.Fprintf(w, "  - %s\n", ex)
		}
		if rec := r.Evidence.Record; rec != nil && shown[rec.Entity] {
			fmt.Fprintf(w, "  operation %s: attempts above\n", rec.Entity)
		} else if rec != nil {
			shown[rec.Entity] = true
			fmt.Fprintf(w, "  operation %s, its attempts as the proxy saw them:\n", rec.Entity)
			clientcheck.WriteAttempts(w, res.Attempts(rec.Entity), "    ")
			fmt.Fprintf(w, "    ledger: %s\n", ledgerText(rec))
		}
	}
	return findings
}

// ledgerText is "operation=2", or why the ledger is unknown.
func ledgerText(rec *verdict.Record) string {
	if rec.LedgerErr != "" {
		return "unreadable: " + rec.LedgerErr
	}
	if n, ok := rec.Ledger[verdict.LedgerOperation]; ok {
		return fmt.Sprintf("%d side effect(s)", n)
	}
	return "not read (the operation named no entity)"
}

// repeatClientCheck is the command line that repeats a run with the same seed (and, for
// a repeated run, the same number of runs).
func repeatClientCheck(prof, mcp string, seed int64, runs int, faults string, restart bool, argv []string) string {
	quoted := make([]string, len(argv))
	for i, a := range argv {
		quoted[i] = report.ShellQuote(a)
	}
	cmd := "idemproof client-check"
	if prof != "" {
		cmd += " --profile " + report.ShellQuote(prof)
	}
	if mcp != "" {
		cmd += " --mcp " + mcp
	}
	if restart {
		cmd += " --restart"
	}
	cmd += fmt.Sprintf(" --seed %d", seed)
	if runs > 1 {
		cmd += fmt.Sprintf(" --repeat %d", runs)
	}
	return fmt.Sprintf("%s --faults %s -- %s", cmd, report.ShellQuote(faults), strings.Join(quoted, " "))
}

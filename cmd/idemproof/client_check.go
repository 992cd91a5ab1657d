package main

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"

	"github.com/idemproof/idemproof/clientcheck"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/scenarios/report"
)

// runClientCheck runs a client command against the reference server behind the fault
// proxy and checks its retry policy: exit 0 clean, 1 on findings, 2 on usage errors, 3
// when interrupted.
func runClientCheck(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("client-check", "[--profile my-api.yaml] [flags] -- <command> [args...]", fmt.Sprintf(
		"Runs the command against the profile's target (default: the embedded reference refund server)\n"+
			"behind the fault proxy, then checks each logical operation (the profile's entity): one side\n"+
			"effect, one key re-sent on every retry, no mismatch (422) retried unchanged, in-flight answers\n"+
			"(409) retried after Retry-After, lost responses resolved or reported unknown.\n"+
			"The command gets %s (the proxy), %s, %s, %s or %s, %s, %s, %s and %s.\n"+
			"Exit status: 0 no findings, 1 findings, 2 a usage, profile or schedule error or a target\n"+
			"that does not answer its ledger, 3 interrupted (SIGINT/SIGTERM; a FAIL seen before still exits 1).",
		clientcheck.EnvBaseURL, clientcheck.EnvOperationURL, clientcheck.EnvOperationBody, clientcheck.EnvKeyHeader,
		clientcheck.EnvKeyField, clientcheck.EnvEntity, clientcheck.EnvOutcomeFile, clientcheck.EnvAdminURL, clientcheck.EnvMCPEndpoint), stderr)
	profilePath := fs.String("profile", "", "the target the client calls, as a profile file (default: the embedded reference refund server)")
	faults := fs.String("faults", clientcheck.DefaultFaultSpec,
		"fault kinds dealt over the operations, on each key's first attempt: hold[=DUR],reset[=P],close[=P],409[=SECS],422,503|502|504,restart, none, or @FILE (JSON rules)")
	seed := fs.Int64("seed", 1, "seed of the fault probabilities (same seed, same request order: same faults)")
	reportDir := fs.String("report-dir", "", "write report.json, junit.xml, report.html and report.md into this folder")
	outcomes := fs.String("outcomes", "", "outcome file the client writes (default: a temporary file); exported as "+clientcheck.EnvOutcomeFile)
	timeout := fs.Duration("timeout", clientcheck.DefaultTimeout, "kill the client command after this long")
	format := fs.String("format", "console", "console | json (the report on stdout)")
	restart := fs.Bool("restart", false, "kill the command (its whole process group) right after every attempt whose response the proxy lost, and start it again with the same environment and "+clientcheck.EnvStateDir+" (once per operation)")
	stateDir := fs.String("state-dir", "", "the state folder exported as "+clientcheck.EnvStateDir+" (default: a temporary folder, removed after the run)")
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
	if _, err := clientcheck.ParseSchedule(*faults); err != nil {
		return fmt.Errorf("--faults: %w", err)
	}
	var profile *scenarios.Profile
	if *profilePath != "" {
		p, err := scenarios.LoadProfile(*profilePath)
		if err != nil {
			return fmt.Errorf("--profile: %w", err)
		}
		profile = p
	}

	// The client's own output goes to stderr so stdout stays the report.
	res, err := clientcheck.Run(ctx, clientcheck.Config{
		Profile:     profile,
		FaultSpec:   *faults,
		Seed:        *seed,
		Timeout:     *timeout,
		OutcomeFile: *outcomes,
		Restart:     *restart,
		StateDir:    *stateDir,
	}, clientcheck.Command(argv, stderr, stderr))
	if err != nil {
		return err
	}
	rep := &res.Report
	interrupted := markInterrupted(ctx, rep)
	repeat := repeatClientCheck(*profilePath, *seed, *faults, *restart, argv)
	rep.Repeat = repeat // the reports repeat the run, never `idemproof check --only client/…`
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
		printClientCheck(stdout, res, repeat)
		if *reportDir != "" {
			fmt.Fprintf(stdout, "reports: %s\n", *reportDir)
		}
	}
	if interrupted { // a FAIL seen before the signal still wins: it is definite
		for _, r := range rep.Results {
			if r.Verdict == scenarios.Fail {
				return errExitFailure
			}
		}
		fmt.Fprintf(stdout, "\nincomplete: %s (exit 3)\n", rep.Interrupted)
		return errExitIncomplete
	}
	if len(res.Findings()) > 0 {
		return errExitFailure
	}
	return nil
}

// markInterrupted records a run stopped by SIGINT or SIGTERM in rep: incomplete, with
// why, and the client's exit no finding of its own, since the harness killed it. The
// other checks keep their verdicts: what the client did before the signal was observed.
func markInterrupted(ctx context.Context, rep *scenarios.Report) bool {
	if ctx.Err() == nil {
		return false
	}
	rep.Complete = false
	rep.Interrupted = context.Cause(ctx).Error()
	for i, r := range rep.Results {
		if r.ScenarioID == clientcheck.IDCommandSucceeded && r.Verdict == scenarios.Fail {
			rep.Results[i].Verdict = scenarios.Unknown
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
	findings := clientcheck.Findings(rep.Results, false)
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

// ledgerText is "operation=2", or why the ledger is unknown.
func ledgerText(rec *scenarios.Record) string {
	if rec.LedgerErr != "" {
		return "unreadable: " + rec.LedgerErr
	}
	if n, ok := rec.Ledger[scenarios.LedgerOperation]; ok {
		return fmt.Sprintf("%d side effect(s)", n)
	}
	return "not read (the operation named no entity)"
}

// repeatClientCheck is the command line that repeats a run with the same seed.
func repeatClientCheck(profile string, seed int64, faults string, restart bool, argv []string) string {
	quoted := make([]string, len(argv))
	for i, a := range argv {
		quoted[i] = report.ShellQuote(a)
	}
	cmd := "idemproof client-check"
	if profile != "" {
		cmd += " --profile " + report.ShellQuote(profile)
	}
	if restart {
		cmd += " --restart"
	}
	return fmt.Sprintf("%s --seed %d --faults %s -- %s", cmd, seed, report.ShellQuote(faults), strings.Join(quoted, " "))
}

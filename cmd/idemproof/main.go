// Command idemproof proves, under real network faults, whether an HTTP API is safe to
// retry, and whether a client's retry loop is.
//
//	idemproof check         run the scenario catalogue against a target (default: embedded reference)
//	idemproof storm         run a seeded fault storm against a target and judge every operation
//	idemproof scan          which tools of an MCP server (or operations of an OpenAPI document) are safe to retry
//	idemproof proxy         run the fault-injecting HTTP proxy
//	idemproof serve         run the reference keyed refund server
//	idemproof scenarios     list the scenario catalogue
//	idemproof client-check  run a client's command against faults and check its retries
//	idemproof init          write a starter profile (from an OpenAPI operation, or a template)
//	idemproof report merge  merge the report.json of several shards or runs
//	idemproof diff          print the verdict changes between two runs' report.json
//	idemproof version       print the version, commit and Go version of this binary
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/idemproof/idemproof/internal/suggest"
)

// command is one subcommand. It returns errExitFailure (or a wrapped error) to make the
// process exit non-zero; flag errors are printed by the flag package itself.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands is the explicit registry of subcommands, in the order `idemproof help` lists them.
func commands() []command {
	return []command{
		{"check", "run the scenario catalogue against a target and report verdicts", runCheck},
		{"storm", "run a seeded fault storm against a target and judge every operation", runStorm},
		{"scan", "probe every tool of an MCP server or operation of an OpenAPI document: safe to retry?", runScan},
		{"proxy", "run the fault-injecting HTTP proxy in front of an upstream", runProxy},
		{"serve", "run the reference keyed refund server", runServe},
		{"scenarios", "list the scenario catalogue (table or JSON)", runScenarios},
		{"client-check", "run a client command against faults and check its retry policy", runClientCheck},
		{"init", "write a starter profile, from an OpenAPI operation or as a template", runInit},
		{"report", "merge the report.json of several shards or runs (report merge)", runReport},
		{"diff", "print the verdict changes between two report.json files", runDiff},
		{"version", "print the version, commit and Go version of this binary", runVersion},
		{"vendor", "run a recording vendor (the downstream sink) for a target to call", runVendor},
	}
}

// errExitFailure reports a completed run whose verdict is a failure: the command already
// printed why, so main only sets the exit status.
var errExitFailure = errors.New("failed")

// errExitIncomplete reports a run that proved less than it was asked to (interrupted, or
// UNKNOWN results): exit status 3. The command already printed why.
var errExitIncomplete = errors.New("incomplete")

// errUsageReported is a usage error the flag package has already printed with the
// command's usage; main only sets exit status 2.
var errUsageReported = errors.New("usage error")

// parseFlags parses args into fs (made with flag.ContinueOnError). -h prints the
// command's usage to stdout, as `idemproof -h` does (help asked for is output, not an
// error); a bad flag is said once, with the closest flag to a mistyped one, and where the
// flags are listed — not followed by the whole usage, so the line that says what to fix
// is not scrolled away.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) error {
	usage, out := fs.Usage, fs.Output()
	fs.Usage = func() {}
	fs.SetOutput(io.Discard) // the error is said once, below, in our words
	err := fs.Parse(args)
	fs.Usage = usage
	fs.SetOutput(out)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		out := fs.Output()
		fs.SetOutput(stdout)
		if usage != nil {
			usage()
		} else {
			fmt.Fprintf(stdout, "Usage of %s:\n", fs.Name())
			fs.PrintDefaults()
		}
		fs.SetOutput(out)
		return err
	}
	fmt.Fprintf(fs.Output(), "%s: %s\n", fs.Name(), flagError(fs, err))
	fmt.Fprintf(fs.Output(), "Run '%s -h' for its flags.\n", fs.Name())
	return errUsageReported
}

func main() {
	ctx, stop := interruptContext(os.Stderr)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// interruptContext is cancelled by the first SIGINT or SIGTERM, its cause naming the
// signal: a command then stops promptly and still reports what it did. A second signal
// ends the process at once (the default behaviour is restored after the first).
func interruptContext(stderr io.Writer) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case s := <-sig:
			signal.Stop(sig)
			fmt.Fprintf(stderr, "\nidemproof: %v signal received: stopping; send it again to quit at once\n", s)
			cancel(fmt.Errorf("%v signal received", s))
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(sig)
		cancel(nil)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 { // no command is a usage error, as a mistyped one is
		usage(stderr)
		return 2
	}
	if args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout)
		return 0
	}
	if args[0] == "--version" || args[0] == "-version" {
		fmt.Fprintf(stdout, "idemproof %s\n", version())
		return 0
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, args[1:], stdout, stderr)
		switch {
		case err == nil:
			return 0
		case errors.Is(err, flag.ErrHelp):
			return 0
		case errors.Is(err, errExitFailure):
			return 1
		case errors.Is(err, errExitIncomplete):
			return 3
		case errors.Is(err, errUsageReported):
			return 2
		default:
			fmt.Fprintf(stderr, "idemproof %s: %v\n", c.name, err)
			return 2
		}
	}
	names := make([]string, 0, len(commands()))
	for _, c := range commands() {
		names = append(names, c.name)
	}
	fmt.Fprintf(stderr, "idemproof: unknown command %q%s\n\n", args[0], suggest.DidYouMean(args[0], names))
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: idemproof <command> [flags]")
	fmt.Fprintln(w)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-13s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'idemproof <command> -h' for a command's flags.")
}

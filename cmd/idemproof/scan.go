package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/idemproof/idemproof/scan"
	"github.com/idemproof/idemproof/scan/scanreport"
	"github.com/idemproof/idemproof/transport/mcpstdio"
	"github.com/idemproof/idemproof/verdict"
)

// scanInput is where `idemproof scan` reads the answer to "send these calls?".
var scanInput io.Reader = os.Stdin

// scanOptions are the parsed flags of `idemproof scan`.
type scanOptions struct {
	cfg                         scan.Config
	headers                     repeatFlag
	only, include, exclude      listFlag
	args, reportDir, profileDir string
	plan, yes, mcpCommand       bool
	allowUnknown                int
}

func scanFlags(stderr io.Writer) (*flag.FlagSet, *scanOptions) {
	o := &scanOptions{}
	fs := newFlagSet("scan", "(--mcp URL | --openapi FILE --base-url URL) [flags]  |  [flags] --mcp-command -- SERVER [ARGS...]",
		"Lists every tool of an MCP server (Streamable HTTP, or a stdio server it starts) or every\n"+
			"mutating operation of an OpenAPI document, where each takes an idempotency key, and the\n"+
			"calls it will make; then, once you confirm (or with --yes), probes each one briefly through\n"+
			"a fault proxy (on a stdio server's pipes, the fault layer): a repeat after a lost\n"+
			"answer, the key with one argument changed, two copies at once. The matrix says per operation\n"+
			"PASS (shown, with proof), FAIL, UNKNOWN (the answers could not tell) or N/A, with its evidence.\n"+
			"Destructive tools, DELETEs and --exclude are skipped unless --allow-destructive or --include\n"+
			"names them; read-only tools are listed and probed with --include-readonly. docs/scan.md.\n\n"+
			"Exit status: 0 every probed cell judged, none failing; 1 a FAIL; 2 usage error, or nothing\n"+
			"could be scanned (unreachable, nothing to probe, not confirmed); 3 UNKNOWN cells beyond\n"+
			"--allow-unknown, or interrupted. A FAIL wins over incomplete.", stderr)
	fs.StringVar(&o.cfg.MCP, "mcp", "", "the MCP server's Streamable HTTP endpoint, e.g. http://127.0.0.1:8091/mcp")
	fs.BoolVar(&o.mcpCommand, "mcp-command", false, "scan the stdio MCP server whose command follows --, e.g. --mcp-command -- npx -y my-mcp-server: it is started (in the current directory, with this environment) to list its tools, then again behind the fault layer on its pipes to probe them")
	fs.StringVar(&o.cfg.OpenAPI, "openapi", "", "an OpenAPI 3.0 or 3.1 document (a file; $refs to other local files are followed)")
	fs.StringVar(&o.cfg.BaseURL, "base-url", "", "where the API of --openapi answers, e.g. http://127.0.0.1:8080")
	fs.Var(&o.headers, "header", "a header on every request, 'Name: value' (credentials); repeatable")
	fs.StringVar(&o.args, "args", "", "a YAML file of real arguments, ledgers and changes per operation (docs/scan.md)")
	fs.BoolVar(&o.plan, "plan", false, "print the operations and the calls the scan would make, and call nothing")
	fs.BoolVar(&o.yes, "yes", false, "do not ask before calling (CI)")
	fs.Var(&o.only, "only", "scan only operations matching these globs (tool names, operationIds, or 'METHOD /path'); comma list or repeated")
	fs.Var(&o.include, "include", "probe these operations even if destructive, read-only or excluded; globs, comma list or repeated")
	fs.Var(&o.exclude, "exclude", "never probe these operations; globs, comma list or repeated")
	fs.BoolVar(&o.cfg.AllowDestructive, "allow-destructive", false, "probe tools annotated destructiveHint: true and DELETE operations too")
	fs.BoolVar(&o.cfg.IncludeReadOnly, "include-readonly", false, "probe tools annotated readOnlyHint: true too")
	fs.Int64Var(&o.cfg.Seed, "seed", 0, "seed of the fault proxy's random source (default: time-based, printed); keys and entities are fresh on every run")
	fs.IntVar(&o.cfg.Parallel, "parallel", scan.DefaultParallel, "operations probed at once")
	fs.DurationVar(&o.cfg.CallTimeout, "call-timeout", scan.DefaultCallTimeout, "time limit of one call")
	fs.DurationVar(&o.cfg.StartTimeout, "start-timeout", mcpstdio.DefaultStartTimeout, "with --mcp-command: how long the server may take to start and answer initialize (a first npx run downloads its package)")
	fs.DurationVar(&o.cfg.OperationTimeout, "timeout", scan.DefaultOperationTimeout, "time limit of one operation's probes")
	fs.StringVar(&o.reportDir, "report-dir", "", "write report.json, report.md and report.html into this folder (created if missing)")
	fs.StringVar(&o.profileDir, "write-profiles", "", "write a starter profile per probed operation into this folder, for idemproof check")
	fs.IntVar(&o.allowUnknown, "allow-unknown", 0, "UNKNOWN cells tolerated before the scan counts as incomplete (exit 3)")
	return fs, o
}

// runScan is `idemproof scan`.
func runScan(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, o := scanFlags(stderr)
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	switch {
	case o.mcpCommand && fs.NArg() == 0:
		return errors.New("--mcp-command needs the server's command after --, e.g. idemproof scan --mcp-command -- npx -y my-mcp-server")
	case o.mcpCommand:
		o.cfg.MCPCommand = fs.Args()
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected argument %q: the target is given with --mcp, --mcp-command -- SERVER ARGS… or --openapi", fs.Arg(0))
	}
	if err := o.check(fs); err != nil {
		return err
	}
	cfg := &o.cfg
	cfg.Only, cfg.Include, cfg.Exclude = o.only, o.include, o.exclude
	cfg.Tool = "idemproof " + version()
	header, err := parseHeaders(o.headers)
	if err != nil {
		return err
	}
	cfg.Header = header
	if o.args != "" {
		if cfg.Args, err = scan.LoadArgs(o.args); err != nil {
			return err
		}
	}
	if err := checkReportDir(o.reportDir); err != nil {
		return err
	}
	seedSet := false
	fs.Visit(func(f *flag.Flag) { seedSet = seedSet || f.Name == "seed" })
	if !seedSet {
		cfg.Seed = time.Now().UnixNano()
	}

	target, err := scan.Enumerate(ctx, cfg)
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(stderr, "idemproof scan: interrupted while listing (%v): nothing was called\n", context.Cause(ctx))
			return errExitIncomplete
		}
		return err
	}
	fmt.Fprintf(stdout, "idemproof scan: %s\n", scanreport.Header(target))
	scanreport.WritePlan(stdout, target)
	if o.plan {
		fmt.Fprintln(stdout, "\n--plan: nothing was called")
		return nil
	}
	probed := 0
	for _, op := range target.Operations {
		if op.Probed() {
			probed++
		}
	}
	if probed == 0 {
		return fmt.Errorf("nothing to probe: %d operation(s) listed, none of them probed (see above for why: --include-readonly, --allow-destructive, --include, --args)", len(target.Operations))
	}
	where := target.Endpoint
	if len(target.Command) > 0 {
		where = "the stdio server " + target.Source
	}
	if !o.yes && !confirmed(ctx, stderr, probed, where) {
		if ctx.Err() != nil {
			fmt.Fprintf(stderr, "\nidemproof scan: interrupted at the prompt (%v): nothing was called\n", context.Cause(ctx))
			return errExitIncomplete
		}
		return errors.New("not confirmed: nothing was called (answer y at the prompt, or pass --yes)")
	}
	fmt.Fprintf(stdout, "\nprobing %d operation(s), %d at once; repeat with: --seed %d\n", probed, min(cfg.Parallel, probed), cfg.Seed)
	cfg.Progress = scanreport.Progress(stdout)
	rep, err := scan.Run(ctx, cfg, target)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	scanreport.WriteSummary(stdout, rep)
	if o.reportDir != "" {
		paths, err := scanreport.WriteDir(o.reportDir, rep)
		if err != nil {
			return fmt.Errorf("write reports: %w", err)
		}
		fmt.Fprintf(stdout, "\nreports: %s\n", strings.Join(paths, " "))
	}
	if o.profileDir != "" {
		paths, errs := scan.WriteProfiles(o.profileDir, rep, cfg)
		for _, err := range errs {
			fmt.Fprintf(stderr, "idemproof scan: --write-profiles: %v\n", err)
		}
		if len(paths) > 0 {
			fmt.Fprintf(stdout, "profiles: %s\n  review the \"# guess:\" lines, then: idemproof check --profile FILE\n", strings.Join(paths, " "))
		}
	}
	return scanExit(stdout, rep, o.allowUnknown)
}

func (o *scanOptions) check(fs *flag.FlagSet) error {
	targets := 0
	for _, given := range []bool{o.cfg.MCP != "", o.mcpCommand, o.cfg.OpenAPI != ""} {
		if given {
			targets++
		}
	}
	switch {
	case targets == 0:
		return errors.New("nothing to scan: give --mcp URL (an MCP server's Streamable HTTP endpoint), --mcp-command -- SERVER ARGS… (a stdio server) or --openapi FILE with --base-url URL")
	case targets > 1:
		return errors.New("give one of --mcp, --mcp-command and --openapi: one scan is one server")
	case o.cfg.OpenAPI != "" && o.cfg.BaseURL == "":
		return errors.New("--openapi needs --base-url: where the API answers (a document's servers are often not the one to probe)")
	case o.cfg.MCP != "" && o.cfg.BaseURL != "":
		return errors.New("--base-url goes with --openapi; an MCP server is named by --mcp alone")
	case o.mcpCommand && o.cfg.BaseURL != "":
		return errors.New("--base-url goes with --openapi; a stdio server is named by its command alone")
	case o.mcpCommand && len(o.headers) > 0:
		return errors.New("--header goes with --mcp and --openapi: a stdio server's requests are lines on a pipe, with no headers (give it credentials in its environment)")
	case o.cfg.Parallel < 1:
		return fmt.Errorf("--parallel %d: must be 1 or more", o.cfg.Parallel)
	case o.cfg.CallTimeout <= 0 || o.cfg.OperationTimeout <= 0:
		return errors.New("--call-timeout and --timeout must be positive")
	case o.cfg.StartTimeout <= 0:
		return errors.New("--start-timeout must be positive, e.g. 10s, 2m")
	case o.allowUnknown < 0:
		return fmt.Errorf("--allow-unknown %d: must be 0 or more", o.allowUnknown)
	case o.plan && o.yes:
		return errors.New("--plan calls nothing, so --yes has nothing to confirm: give one of them")
	}
	return nil
}

// parseHeaders reads --header 'Name: value' flags.
func parseHeaders(list []string) (http.Header, error) {
	h := http.Header{}
	for _, s := range list {
		name, value, ok := strings.Cut(s, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t") {
			return nil, fmt.Errorf("--header %q: want 'Name: value'", s)
		}
		h.Add(name, strings.TrimSpace(value))
	}
	return h, nil
}

// confirmed asks on stderr whether to send the calls, and reads the answer; an interrupt
// while it waits is a no.
func confirmed(ctx context.Context, stderr io.Writer, n int, endpoint string) bool {
	fmt.Fprintf(stderr, "\nSend these calls to %d operation(s) of %s? They run: each probed operation executes several times. [y/N] ", n, endpoint)
	answer := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(scanInput).ReadString('\n')
		answer <- strings.ToLower(strings.TrimSpace(line))
	}()
	select {
	case a := <-answer:
		return a == "y" || a == "yes"
	case <-ctx.Done():
		return false
	}
}

// scanExit is check's exit status for a scan: 1 on a FAIL; 3 when interrupted or when
// more cells than allowUnknown are UNKNOWN; 0 otherwise. A FAIL wins over incomplete.
func scanExit(stdout io.Writer, rep *scan.Report, allowUnknown int) error {
	fails, unknown := rep.Headline.Cells[verdict.Fail], rep.Headline.Cells[verdict.Unknown]
	switch {
	case fails > 0:
		return errExitFailure
	case rep.Interrupted != "":
		fmt.Fprintf(stdout, "\nincomplete: the scan was interrupted: %s (exit 3)\n", rep.Interrupted)
		return errExitIncomplete
	case unknown > allowUnknown:
		fmt.Fprintf(stdout, "\nincomplete: %d UNKNOWN cell(s), --allow-unknown %d (exit 3)\n", unknown, allowUnknown)
		return errExitIncomplete
	}
	return nil
}

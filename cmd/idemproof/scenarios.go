package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/idemproof/idemproof/reference"
	"github.com/idemproof/idemproof/scenarios"
)

// runScenarios is `idemproof scenarios`: the catalogue as a table, JSON or Markdown,
// optionally narrowed like `check` (--only, --label); --flaws lists the reference
// server's flaws and the scenario that catches each.
func runScenarios(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("scenarios", "[flags]", "Lists the scenario catalogue (a table, --json or --markdown), or the reference server's flaws (--flaws).", stderr)
	asJSON := fs.Bool("json", false, "print the catalogue as JSON")
	asMarkdown := fs.Bool("markdown", false, "print the catalogue as a Markdown table (README)")
	flaws := fs.Bool("flaws", false, "list the reference server's flaws and the scenario that catches each")
	var only, labels listFlag
	fs.Var(&only, "only", "scenario IDs or globs, comma list or repeated")
	fs.Var(&labels, "label", "only scenarios carrying these labels")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if *asJSON && *asMarkdown {
		return fmt.Errorf("--json and --markdown: choose one")
	}
	if *flaws {
		return writeFlaws(stdout, *asJSON, *asMarkdown)
	}
	list, err := scenarios.Select(only, labels)
	if err != nil {
		return fmt.Errorf("--only/--label: %w", err)
	}
	switch {
	case *asJSON:
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(list)
	case *asMarkdown:
		return scenarios.WriteMarkdownTable(stdout, list)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tLEVEL\tDESCRIPTION")
	for _, s := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.ID, s.Level, s.Description)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\n%d scenarios\n", len(list))
	return nil
}

func writeFlaws(w io.Writer, asJSON, asMarkdown bool) error {
	all := reference.Flaws()
	switch {
	case asJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(all)
	case asMarkdown:
		var b strings.Builder
		b.WriteString("| flaw | models | caught by |\n|---|---|---|\n")
		for _, f := range all {
			fmt.Fprintf(&b, "| `%s` | %s | `%s` |\n", f.Name, f.Description, f.CaughtBy)
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "FLAW\tCAUGHT BY\tMODELS")
	for _, f := range all {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", f.Name, f.CaughtBy, f.Description)
	}
	return tw.Flush()
}

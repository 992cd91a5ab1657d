package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/idemproof/idemproof/internal/buildinfo"
)

// version is the one-line description of this binary that `idemproof version`,
// `idemproof --version` and every report (Report.Tool, after "idemproof ") carry.
func version() string { return buildinfo.Read().String() }

// runVersion is `idemproof version`: the one line, then the build's parts one per line.
func runVersion(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", "", "Prints the version, VCS commit and Go version this binary was built from.", stderr)
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	info := buildinfo.Read()
	fmt.Fprintf(stdout, "idemproof %s\n", info)
	fmt.Fprintf(stdout, "  version  %s\n", info.Version)
	switch {
	case info.Commit != "" && info.Modified:
		fmt.Fprintf(stdout, "  commit   %s (modified)\n", info.Commit)
	case info.Commit != "":
		fmt.Fprintf(stdout, "  commit   %s\n", info.Commit)
	case info.Version != buildinfo.Devel:
		fmt.Fprintf(stdout, "  commit   not recorded: the tag %s names the source\n", info.Version)
	default:
		fmt.Fprintln(stdout, "  commit   unknown: the binary was built without VCS stamping (-buildvcs=false, as a flag or in GOFLAGS; go run; or outside a git checkout)")
	}
	if info.Time != "" {
		fmt.Fprintf(stdout, "  time     %s\n", info.Time)
	}
	fmt.Fprintf(stdout, "  go       %s\n", info.GoVersion)
	return nil
}

// newFlagSet is a subcommand's flag set with the usage every subcommand prints:
//
//	usage: idemproof NAME ARGS
//
//	ABOUT
//
//	  -flag ...
func newFlagSet(name, args, about string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("idemproof "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		w := fs.Output() // stdout when asked for with -h (parseFlags), else stderr
		line := "usage: idemproof " + name
		if args != "" {
			line += " " + args
		}
		fmt.Fprintln(w, line)
		fmt.Fprintln(w)
		fmt.Fprintln(w, about)
		hasFlags := false
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags {
			fmt.Fprintln(w)
			fs.PrintDefaults()
		}
	}
	return fs
}

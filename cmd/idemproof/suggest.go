package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/idemproof/idemproof/internal/suggest"
)

// The CLI keeps the standard library's flag package: its parsing is what Go users
// expect, every subcommand already uses it, and the two things it lacks — "did you mean"
// for a mistyped subcommand or flag — are internal/suggest and the small helper below,
// not a reason for a framework.

// suggestFlag prints "did you mean --x?" after the flag package's own error for an
// undefined flag, naming the closest flag the set defines.
func suggestFlag(fs *flag.FlagSet, err error, w io.Writer) {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: ")
	if !ok {
		return
	}
	name = strings.TrimLeft(name, "-")
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if best := suggest.Closest(name, names); best != "" {
		fmt.Fprintf(w, "%s: unknown flag -%s; did you mean --%s?\n", fs.Name(), name, best)
	}
}

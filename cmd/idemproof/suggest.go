package main

import (
	"flag"
	"strings"

	"github.com/idemproof/idemproof/internal/suggest"
)

// The CLI keeps the standard library's flag package: its parsing is what Go users
// expect, every subcommand already uses it, and the two things it lacks — "did you mean"
// for a mistyped subcommand or flag — are internal/suggest and the small helper below,
// not a reason for a framework.

// flagError is the flag package's parse error in the CLI's words: "unknown flag -sede;
// did you mean --seed?" for an undefined flag (the closest one the set defines, if any is
// close), the error as the flag package says it otherwise ("invalid value "abc" for flag
// -seed: parse error").
func flagError(fs *flag.FlagSet, err error) string {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: ")
	if !ok {
		return err.Error()
	}
	name = strings.TrimLeft(name, "-")
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	msg := "unknown flag -" + name
	if best := suggest.Closest(name, names); best != "" {
		msg += "; did you mean --" + best + "?"
	}
	return msg
}

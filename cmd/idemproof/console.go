package main

import (
	"io"
	"os"

	"github.com/idemproof/idemproof/report"
	"github.com/idemproof/idemproof/verdict"
)

// liveProgress is the per-scenario line of `idemproof check`: on a terminal with a
// [12/49] counter and coloured verdicts (no colour when NO_COLOR is set or TERM is dumb,
// https://no-color.org), plain lines otherwise, so logs and pipes stay greppable.
func liveProgress(w io.Writer, total int) func(verdict.Result) {
	if !isTerminal(w) {
		return report.Progress(w)
	}
	return report.ProgressWith(w, report.LiveOptions{
		Total:   total,
		Counter: true,
		Color:   os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb",
	})
}

// isTerminal reports whether w is a character device (a terminal), without a
// dependency: the mode bit is all a progress line needs to know.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

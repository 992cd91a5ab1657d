package report

import (
	"fmt"
	"io"
	"sync"

	"github.com/idemproof/idemproof/verdict"
)

// LiveOptions shape the live line per finished scenario.
type LiveOptions struct {
	// Total, when > 0 with Counter, prefixes each line with "[12/49]".
	Total   int
	Counter bool
	// Color paints the verdict (green PASS, red FAIL, yellow NON-STRICT and UNKNOWN).
	// Callers turn it on only for a terminal and never when NO_COLOR is set.
	Color bool
}

// ProgressWith is Progress with a counter and colours, for a terminal. With the zero
// LiveOptions its lines are exactly Progress's.
func ProgressWith(w io.Writer, o LiveOptions) func(verdict.Result) {
	var mu sync.Mutex
	done := 0
	return func(r verdict.Result) {
		mu.Lock()
		defer mu.Unlock()
		done++
		if o.Counter && o.Total > 0 {
			width := len(fmt.Sprint(o.Total))
			fmt.Fprintf(w, "[%*d/%d] ", width, done, o.Total)
		}
		if !o.Color {
			WriteLine(w, r)
			return
		}
		ruling := fmt.Sprintf("%-10s", r.Verdict)
		if c := verdictColor(r.Verdict); c != "" {
			ruling = c + ruling + "\x1b[0m"
		}
		fmt.Fprintf(w, "%s  %-32s  %-12s  %7s  %s\n",
			ruling, r.ScenarioID, r.Target, roundDuration(duration(r)), lineMessage(r))
	}
}

func verdictColor(v verdict.Verdict) string {
	switch v {
	case verdict.Pass:
		return "\x1b[32m"
	case verdict.Fail:
		return "\x1b[1;31m"
	case verdict.NonStrict, verdict.Unknown:
		return "\x1b[33m"
	}
	return ""
}

package report_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/report"
	"github.com/idemproof/idemproof/verdict"
)

func TestProgressWithCounterAndColor(t *testing.T) {
	results := sampleReport().Results[:3]

	var plain, zero bytes.Buffer
	p := report.Progress(&plain)
	z := report.ProgressWith(&zero, report.LiveOptions{})
	for _, r := range results {
		p(r)
		z(r)
	}
	require.Equal(t, plain.String(), zero.String(), "zero options: the plain lines")

	var counted bytes.Buffer
	c := report.ProgressWith(&counted, report.LiveOptions{Total: 12, Counter: true})
	for _, r := range results {
		c(r)
	}
	lines := strings.Split(strings.TrimSpace(counted.String()), "\n")
	require.Len(t, lines, 3)
	require.True(t, strings.HasPrefix(lines[0], "[ 1/12] PASS "), lines[0])
	require.True(t, strings.HasPrefix(lines[1], "[ 2/12] FAIL "), lines[1])
	require.NotContains(t, counted.String(), "\x1b[", "no colour unless asked")

	var colored bytes.Buffer
	k := report.ProgressWith(&colored, report.LiveOptions{Color: true})
	k(results[1])
	require.True(t, strings.HasPrefix(colored.String(), "\x1b[1;31mFAIL      \x1b[0m  replay/after-503"), "%q", colored.String())
	k(verdict.Result{Verdict: verdict.NA, ScenarioID: "x/y"})
	require.Contains(t, colored.String(), "\nN/A         x/y", "N/A stays uncoloured")
}

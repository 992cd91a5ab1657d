package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestTimingListsTheTenSlowestPackagesAndEveryPhase(t *testing.T) {
	var times []pkgTime
	for i := 1; i <= 12; i++ {
		times = append(times, pkgTime{name: fmt.Sprintf("example.com/m/p%02d", i), elapsed: time.Duration(i) * time.Second})
	}
	phases := parsePhases(strings.NewReader("gofmt 0.4\nvet 21.25\nnot-a-line\nimages 0\nfuzz 35\n"))
	var out bytes.Buffer
	writeTiming(&out, "example.com/m", times, phases, 612*time.Second)
	got := out.String()
	require.Contains(t, got, "slowest packages (test time, of 12):\n     12.0s  p12\n     11.0s  p11\n")
	require.NotContains(t, got, "  p02\n", "only ten are listed")
	require.Contains(t, got, "     3.0s  p03\n")
	require.Contains(t, got, "phases: gofmt 400ms, vet 21s, images 0s, fuzz 35s, tests 10m12s\n")
}

// A package whose start is known says when it started: a slow one that starts late is
// the run's critical path.
func TestTimingSaysWhenASlowPackageStarted(t *testing.T) {
	var out bytes.Buffer
	writeTiming(&out, "example.com/m", []pkgTime{{name: "example.com/m/slow", elapsed: 200 * time.Second, startedAfter: 95 * time.Second}}, nil, 0)
	require.Contains(t, out.String(), "  200.0s  slow                         (from +1m35s)\n")
}

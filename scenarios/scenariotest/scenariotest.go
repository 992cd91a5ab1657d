// Package scenariotest runs the idemproof catalogue from `go test`: one subtest per
// scenario, and an in-process target for a Go team's own http.Handler.
//
//	func TestRefundsAreSafeToRetry(t *testing.T) {
//		profile, stop := scenariotest.HandlerTarget(myapi.NewHandler(), myProfile)
//		defer stop()
//		scenariotest.RunT(t, profile)
//	}
//
// RunT names each subtest by its scenario ID, so `go test -run
// 'TestRefundsAreSafeToRetry/replay/after-503'` runs one scenario and `-run '…/race'` a
// group. It runs the selection as `idemproof check` does, in one run with several
// scenarios at once, and then reports each result in its subtest. A subtest fails on
// FAIL and UNKNOWN (UNKNOWN is never a pass; NON-STRICT too with scenarios.Strict()),
// with the verdict, requirement, evidence, the aligned attempt timeline and the `go
// test -run` command that repeats it (with IDEMPROOF_SEED, the run's seed); N/A is a
// skipped subtest; PASS, INFO and NON-STRICT pass and log what was observed.
//
// The package sits beside scenarios (which must not depend on the testing package or
// on the renderers) and uses only its exported API and report.
package scenariotest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/idemproof/idemproof/internal/buildinfo"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/report"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/verdict"
)

// RunT runs the scenarios the options select (all by default) against p and reports
// each in its own subtest of t, named by scenario ID. The scenarios run as
// `idemproof check` runs them: in one run (one preflight, one fault proxy, one late
// ledger read at the end), several at once (scenarios.WithConcurrency; the runner's
// default otherwise, 1 for one at a time), so the whole catalogue takes about as long
// as the CLI takes. Only the scenarios whose subtests `go test -run` and `-skip` let
// through are run. A profile that does not validate or a run that cannot start fails t
// itself.
//
// Without scenarios.WithSeed, the seed of the proxy's probabilistic faults comes from
// the environment variable IDEMPROOF_SEED, or from the clock; a failing subtest's
// repeat line names it with the `go test -run` command of that subtest.
func RunT(t *testing.T, p *profile.Profile, opts ...scenarios.CheckOption) {
	t.Helper()
	cfg := scenarios.RunConfig{Tool: "idemproof " + buildinfo.Module().String()}
	for _, o := range opts {
		o(&cfg)
	}
	if p == nil {
		t.Fatal("scenariotest.RunT: nil profile")
	}
	if err := p.Validate(); err != nil {
		t.Fatalf("scenariotest.RunT: profile %s: %v", p.Name, err)
	}
	if cfg.Seed == 0 {
		seed, err := envSeed()
		if err != nil {
			t.Fatalf("scenariotest.RunT: %v", err)
		}
		cfg.Seed = seed
	}
	cfg.Profiles = []*profile.Profile{p}
	list, err := scenarios.Select(cfg.Only, cfg.Labels)
	if err != nil {
		t.Fatalf("scenariotest.RunT: %v", err)
	}
	chosen := chosenByRunFlags(t.Name(), list)
	results := map[string]verdict.Result{}
	var rep *verdict.Report
	if len(chosen) > 0 {
		all := cfg
		all.Only, all.Labels = chosen, nil
		rep, err = scenarios.Run(t.Context(), all)
		if err != nil {
			t.Fatalf("scenariotest.RunT: %v", err)
		}
		for _, r := range rep.Results {
			results[r.ScenarioID] = r
		}
		t.Logf("idemproof: %d scenario(s) against %s, seed %d, in %s", len(chosen), p.Name, rep.Seed,
			time.Duration(rep.DurationMS*float64(time.Millisecond)).Round(time.Millisecond))
	}
	for _, sc := range list {
		t.Run(sc.ID, func(t *testing.T) {
			r, ok := results[sc.ID]
			one := rep
			if !ok {
				// A subtest the flags let through that the run above did not foresee
				// (a -run pattern chosenByRunFlags reads otherwise than testing does):
				// its scenario runs here, on its own.
				single := cfg
				single.Only, single.Labels = []string{sc.ID}, nil
				var err error
				if one, err = scenarios.Run(t.Context(), single); err != nil {
					t.Fatalf("run %s: %v", sc.ID, err)
				}
				if len(one.Results) == 0 {
					t.Fatalf("run %s: no result (%s)", sc.ID, one.Interrupted)
				}
				r = one.Results[0]
			}
			judge(t, one, r)
		})
	}
}

// judge turns one result into the subtest's outcome.
func judge(t *testing.T, rep *verdict.Report, r verdict.Result) {
	t.Helper()
	switch {
	case r.Verdict == verdict.NA:
		t.Skipf("N/A: %s", r.Message)
	case r.Verdict == verdict.Unknown || report.Failing(r.Verdict, rep.Strict):
		t.Error(failureMessage(rep, r, goTestCommand(t.Name(), rep.Seed)))
	default:
		t.Logf("%s: %s", r.Verdict, r.Message)
	}
}

// FailureMessage is what a failing subtest prints: the verdict and what was observed,
// the requirement and its source, the evidence categories and examples, the attempt
// timeline (proxy journal, client history, ledger) and the command that repeats it
// (report.RepeatCommand; RunT's subtests print their own `go test -run` command instead).
func FailureMessage(rep *verdict.Report, r verdict.Result) string {
	return failureMessage(rep, r, report.RepeatCommand(rep, r))
}

func failureMessage(rep *verdict.Report, r verdict.Result, repeat string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s @ %s: %s\n", r.Verdict, r.ScenarioID, r.Target, r.Message)
	fmt.Fprintf(&b, "  requirement: %s [%s; %s]\n", r.Requirement, r.Level, r.Source)
	if len(r.Evidence.Categories) > 0 {
		fmt.Fprintf(&b, "  evidence: %s\n", report.CategoriesText(r.Evidence.Categories))
	}
	for _, ex := range r.Evidence.Examples {
		fmt.Fprintf(&b, "  - %s\n", ex)
	}
	if r.Evidence.Record != nil {
		b.WriteString(report.ResultTimeline(r))
	}
	fmt.Fprintf(&b, "  repeat: %s", repeat)
	return b.String()
}

// HandlerTarget serves h on a loopback test server (httptest, port 0) and returns a copy
// of p whose base_url is that server, and the function that stops it. p describes the API
// h implements (operation, ledger, declared choices), as a profile file would; its
// base_url and proxy are replaced, since the runner's in-process fault proxy sits between
// the scenarios and h. No process, no port to pick.
func HandlerTarget(h http.Handler, p *profile.Profile) (*profile.Profile, func()) {
	srv := httptest.NewServer(h)
	cp := *p
	cp.BaseURL = srv.URL
	cp.Proxy = nil
	if cp.Name == "" {
		cp.Name = "handler"
	}
	return &cp, srv.Close
}

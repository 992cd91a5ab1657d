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
// group. A subtest fails on FAIL and UNKNOWN (UNKNOWN is never a pass; NON-STRICT too
// with scenarios.Strict()), with the verdict, requirement, evidence, the aligned attempt
// timeline and the command that repeats it; N/A is a skipped subtest; PASS, INFO and
// NON-STRICT pass and log what was observed.
//
// The package sits beside scenarios (which must not depend on the testing package or
// on the renderers) and uses only its exported API and report.
package scenariotest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/idemproof/idemproof/internal/buildinfo"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/report"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/verdict"
)

// RunT runs the scenarios the options select (all by default) against p, each in its own
// subtest of t named by scenario ID, one after the other. With
// scenarios.WithConcurrency(n) for n > 1 the subtests run in parallel (t.Parallel), as
// many at once as `go test -parallel` allows. A profile that does not validate, a target
// that fails the preflight, a test hook that does not act (scenarios.ProveHooks, made
// once for every selected scenario before the subtests) or a run that cannot start fails
// t itself.
func RunT(t *testing.T, p *profile.Profile, opts ...scenarios.CheckOption) {
	t.Helper()
	cfg := scenarios.RunConfig{Profiles: []*profile.Profile{p}, Tool: "idemproof " + buildinfo.Module().String()}
	for _, o := range opts {
		o(&cfg)
	}
	if p == nil {
		t.Fatal("scenariotest.RunT: nil profile")
	}
	if err := p.Validate(); err != nil {
		t.Fatalf("scenariotest.RunT: profile %s: %v", p.Name, err)
	}
	list, err := scenarios.Select(cfg.Only, cfg.Labels)
	if err != nil {
		t.Fatalf("scenariotest.RunT: %v", err)
	}
	// The preflight and the hook proof once for the whole selection, not once per subtest.
	if err := scenarios.Preflight(t.Context(), p); err != nil {
		t.Fatalf("scenariotest.RunT: %v", err)
	}
	proof, err := scenarios.ProveHooks(t.Context(), p, list, cfg.UnprovenHooks)
	if err != nil {
		t.Fatalf("scenariotest.RunT: %v", err)
	}
	for _, n := range proof.Notes() {
		t.Logf("preflight: %s", n)
	}
	cfg.NoPreflight, cfg.HookProofs = true, map[string]*scenarios.HookProof{p.Name: proof}
	parallel := cfg.Concurrency > 1
	for _, sc := range list {
		t.Run(sc.ID, func(t *testing.T) {
			if parallel {
				t.Parallel()
			}
			one := cfg
			one.Only, one.Labels, one.Progress, one.Concurrency = []string{sc.ID}, nil, nil, 1
			rep, err := scenarios.Run(t.Context(), one)
			if err != nil {
				t.Fatalf("run %s: %v", sc.ID, err)
			}
			for _, r := range rep.Results {
				judge(t, rep, r)
			}
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
		t.Error(FailureMessage(rep, r))
	default:
		t.Logf("%s: %s", r.Verdict, r.Message)
	}
}

// FailureMessage is what a failing subtest prints: the verdict and what was observed,
// the requirement and its source, the evidence categories and examples, the attempt
// timeline (proxy journal, client history, ledger) and the command that repeats it.
func FailureMessage(rep *verdict.Report, r verdict.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s @ %s: %s\n", r.Verdict, r.ScenarioID, r.Target, r.Message)
	fmt.Fprintf(&b, "  requirement: %s [%s; %s]\n", r.Requirement, r.Level, r.Source)
	if len(r.Evidence.Categories) > 0 {
		var cats []string
		for _, k := range sortedKeys(r.Evidence.Categories) {
			cats = append(cats, fmt.Sprintf("%s=%d", k, r.Evidence.Categories[k]))
		}
		fmt.Fprintf(&b, "  evidence: %s\n", strings.Join(cats, " "))
	}
	for _, ex := range r.Evidence.Examples {
		fmt.Fprintf(&b, "  - %s\n", ex)
	}
	if r.Evidence.Record != nil {
		b.WriteString(report.ResultTimeline(r))
	}
	fmt.Fprintf(&b, "  repeat: %s", report.RepeatCommand(rep, r))
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

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

package report_test

import (
	"os"
	"time"

	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/scenarios/report"
)

func ExampleWriteLine() {
	report.WriteLine(os.Stdout, scenarios.Result{
		ScenarioID: "replay/after-503",
		Target:     "reference",
		Verdict:    scenarios.Pass,
		Message:    "one side effect; the retry got the committed 201",
		Duration:   41 * time.Millisecond,
	})
	// Output:
	// PASS        replay/after-503                  reference        41ms  one side effect; the retry got the committed 201
}

func ExampleWriteSummary() {
	report.WriteSummary(os.Stdout, &scenarios.Report{
		Seed:    7,
		Targets: []string{"reference", "my-api"},
		Results: []scenarios.Result{
			{ScenarioID: "replay/after-503", Target: "reference", Verdict: scenarios.Pass},
			{ScenarioID: "replay/after-503", Target: "my-api", Verdict: scenarios.Fail,
				Message: "2 side effects for one key", Requirement: "one side effect", Level: scenarios.LevelSafety, Source: "draft-07",
				Evidence: scenarios.Evidence{Categories: map[string]int{scenarios.CatDuplicated: 1}}},
		},
	})
	// Output:
	// target     PASS  INFO  N/A  NON-STRICT  UNKNOWN  FAIL  total
	//   reference     1     0    0           0        0     0      1
	//   my-api        0     0    0           0        0     1      1
	//
	// 1 failing result(s) (seed 7, strict=false):
	//
	// FAIL replay/after-503 @ my-api: 2 side effects for one key
	//   requirement: one side effect [SAFETY; draft-07]
	//   evidence: duplicated=1
	//   repeat: idemproof check --seed 7 --only replay/after-503 --profile my-api
}

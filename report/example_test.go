package report_test

import (
	"os"
	"time"

	"github.com/idemproof/idemproof/report"
	"github.com/idemproof/idemproof/verdict"
)

func ExampleWriteLine() {
	report.WriteLine(os.Stdout, verdict.Result{
		ScenarioID: "replay/after-503",
		Target:     "reference",
		Verdict:    verdict.Pass,
		Message:    "one side effect; the retry got the committed 201",
		Duration:   41 * time.Millisecond,
	})
	// Output:
	// PASS        replay/after-503                  reference        41ms  one side effect; the retry got the committed 201
}

func ExampleWriteSummary() {
	report.WriteSummary(os.Stdout, &verdict.Report{
		Seed:    7,
		Targets: []string{"reference", "my-api"},
		Results: []verdict.Result{
			{ScenarioID: "replay/after-503", Target: "reference", Verdict: verdict.Pass},
			{ScenarioID: "replay/after-503", Target: "my-api", Verdict: verdict.Fail,
				Message: "2 side effects for one key", Requirement: "one side effect", Level: verdict.LevelSafety, Source: "draft-07",
				Evidence: verdict.Evidence{Categories: map[string]int{verdict.CatDuplicated: 1}}},
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
	//   evidence: duplicated=1 (side effects beyond the one a key allows)
	//   repeat: idemproof check --seed 7 --only replay/after-503 --profile my-api
}

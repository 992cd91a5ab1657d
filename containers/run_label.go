package containers

import (
	"os"

	"github.com/testcontainers/testcontainers-go"
)

// RunLabel is the label every container and network of one ci/test run carries, with
// the run's id ($IDEMPROOF_TEST_RUN) as its value: ci/test removes what carries its own
// id when it ends, and nothing else — not another run's containers, nor anything else
// testcontainers started on the machine (org.testcontainers=true marks all of those).
const RunLabel = "dev.idemproof.run"

// RunEnv names the variable that holds the run id.
const RunEnv = "IDEMPROOF_TEST_RUN"

// RunLabels are the labels of the current run: {RunLabel: id}, or none when no run id
// is set (a plain go test; testcontainers' own labels still mark the containers).
func RunLabels() map[string]string {
	id := os.Getenv(RunEnv)
	if id == "" {
		return map[string]string{}
	}
	return map[string]string{RunLabel: id}
}

// WithRunLabel labels a container with RunLabels. referencectr.Run and proxyctr.Run
// apply it by default; containers started otherwise should add it.
func WithRunLabel() testcontainers.CustomizeRequestOption {
	return testcontainers.WithLabels(RunLabels())
}

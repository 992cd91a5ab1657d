package proxyctr

import (
	"strconv"

	"github.com/testcontainers/testcontainers-go"
)

// WithUpstream adds another upstream (a replica); requests are spread round-robin, and a
// concurrent duplicate delivery sends its two copies to two different replicas.
func WithUpstream(url string) testcontainers.CustomizeRequestOption {
	return testcontainers.WithCmdArgs("--upstream", url)
}

// WithSeed fixes the seed of the proxy's one random source (rule probabilities), so a
// run's faults can be reproduced.
func WithSeed(seed int64) testcontainers.CustomizeRequestOption {
	return testcontainers.WithCmdArgs("--seed", strconv.FormatInt(seed, 10))
}

// tokenOption is an option Run also reads, to remember the token for AdminToken.
type tokenOption struct {
	testcontainers.CustomizeRequestOption
	token string
}

// WithAdminToken requires `Authorization: Bearer <token>` on the admin API.
func WithAdminToken(token string) testcontainers.ContainerCustomizer {
	return tokenOption{CustomizeRequestOption: testcontainers.WithCmdArgs("--admin-token", token), token: token}
}

// rulesPath is where WithRulesFile puts the rules inside the container.
const rulesPath = "/etc/idemproof/rules.yaml"

// WithRulesFile copies a rules file (YAML or JSON, the faultproxy.Rule shape) from the
// host into the container and loads it at start.
func WithRulesFile(hostPath string) testcontainers.CustomizeRequestOption {
	return func(req *testcontainers.GenericContainerRequest) error {
		// 0644: the image runs as nobody (65534), which must be able to read it.
		if err := testcontainers.WithFiles(testcontainers.ContainerFile{
			HostFilePath: hostPath, ContainerFilePath: rulesPath, FileMode: 0o644,
		})(req); err != nil {
			return err
		}
		return testcontainers.WithCmdArgs("--rules", rulesPath)(req)
	}
}

// WithJournalCapacity sets how many journal records the proxy keeps (older ones are
// dropped); raise it when a run's attempts must all stay countable.
func WithJournalCapacity(records int) testcontainers.CustomizeRequestOption {
	return testcontainers.WithCmdArgs("--journal-capacity", strconv.Itoa(records))
}

// WithJournalBytes sets how many bytes of journal records the proxy keeps (default 64
// MiB; the oldest are dropped); raise it with WithJournalCapacity when a long run's
// attempts must all stay countable.
func WithJournalBytes(bytes int64) testcontainers.CustomizeRequestOption {
	return testcontainers.WithCmdArgs("--journal-bytes", strconv.FormatInt(bytes, 10))
}

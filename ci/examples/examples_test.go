// Package examples_test keeps the CI examples for users honest: the profile they copy
// parses and validates, both CI files are valid YAML, and each publishes the reports from
// the folder its `idemproof check` writes them to.
package examples_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/idemproof/idemproof/scenarios"
)

func TestExampleProfileIsValidAndUsesTheRunningProxy(t *testing.T) {
	p, err := scenarios.LoadProfile("idemproof.yaml")
	require.NoError(t, err)
	require.Equal(t, "my-api", p.Name)
	require.NotNil(t, p.Proxy, "the example runs through the proxy the CI job started")
	require.Equal(t, "http://127.0.0.1:8081", p.Proxy.URL)
	require.Equal(t, "http://127.0.0.1:8082", p.Proxy.Admin)
	require.Equal(t, 409, p.Expect.InFlight, "inherited from the ietf-draft-07 preset")
}

var checkCommand = regexp.MustCompile(`idemproof check --profile idemproof\.yaml --report-dir (\S+)`)

func TestCIExamplesRunTheCatalogueAndPublishItsReports(t *testing.T) {
	for _, file := range []string{"github-actions.yml", "gitlab-ci.yml"} {
		t.Run(file, func(t *testing.T) {
			data, err := os.ReadFile(file)
			require.NoError(t, err)
			var doc map[string]any
			require.NoError(t, yaml.Unmarshal(data, &doc), "valid YAML")
			text := string(data)
			m := checkCommand.FindStringSubmatch(text)
			require.NotNil(t, m, "runs idemproof check with the profile and a report folder")
			dir := m[1]
			require.Contains(t, text, dir+"/junit.xml", "publishes the JUnit report it wrote")
			require.Regexp(t, `(path:|-) `+regexp.QuoteMeta(dir)+`/\s`, text, "keeps the HTML report (the whole folder)")
			require.Contains(t, text, "proxy --listen", "puts the proxy in front of the service")
			require.Equal(t, 1, strings.Count(text, "--upstream"), "one upstream: the user's service")
		})
	}
}

// Package examples_test keeps the CI examples for users and the repository's GitHub
// Action honest: the profile they copy parses and validates, every CI file is valid YAML
// with the keys the CI system needs, every action they name is pinned to its current
// major version, and both examples install one tagged idemproof release, run sharded
// checks and merge the shards.
package examples_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/idemproof/idemproof/profile"
)

// currentMajors is the major version every example pins each action to: the current one
// when this was last checked. An older major here is a rotting example.
var currentMajors = map[string]string{
	"actions/checkout":           "v7",
	"actions/setup-go":           "v7",
	"actions/upload-artifact":    "v7",
	"actions/download-artifact":  "v8",
	"docker/setup-buildx-action": "v4",
	"idemproof/idemproof":        "v0",
}

var majorPin = regexp.MustCompile(`^([\w.-]+/[\w.-]+)@(v\d+)$`)

// uses collects every `uses:` value in a parsed YAML document, wherever it sits.
func uses(node any) []string {
	var out []string
	switch n := node.(type) {
	case map[string]any:
		for k, v := range n {
			if s, ok := v.(string); ok && k == "uses" {
				out = append(out, s)
			}
			out = append(out, uses(v)...)
		}
	case []any:
		for _, v := range n {
			out = append(out, uses(v)...)
		}
	}
	return out
}

func load(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, yaml.Unmarshal(data, &doc), "%s: valid YAML", path)
	return doc
}

func m(t *testing.T, v any, what string) map[string]any {
	t.Helper()
	out, ok := v.(map[string]any)
	require.True(t, ok, "%s: want a mapping, got %T", what, v)
	return out
}

func steps(t *testing.T, job map[string]any) []map[string]any {
	t.Helper()
	list, ok := job["steps"].([]any)
	require.True(t, ok, "steps: want a list")
	var out []map[string]any
	for _, s := range list {
		out = append(out, m(t, s, "step"))
	}
	return out
}

func requirePinnedToCurrentMajors(t *testing.T, path string, doc map[string]any) {
	t.Helper()
	all := uses(doc)
	require.NotEmpty(t, all, path)
	for _, u := range all {
		if strings.HasPrefix(u, "./") {
			continue
		}
		pin := majorPin.FindStringSubmatch(u)
		require.NotNil(t, pin, "%s: %q is not pinned to a major version (owner/name@vN)", path, u)
		want, known := currentMajors[pin[1]]
		require.True(t, known, "%s: %s is not in currentMajors: look up its current major and add it", path, pin[1])
		require.Equal(t, want, pin[2], "%s: %s", path, pin[1])
	}
}

var tag = regexp.MustCompile(`^v\d+\.\d+\.\d+$`)

func TestExampleProfileIsValidAndUsesTheInProcessProxy(t *testing.T) {
	p, err := profile.Load("idemproof.yaml")
	require.NoError(t, err)
	require.Equal(t, "my-api", p.Name)
	require.Nil(t, p.Proxy, "the examples run idemproof's in-process proxy")
	require.Equal(t, "http://127.0.0.1:8080", p.BaseURL)
	require.Equal(t, 409, p.Expect.InFlight, "inherited from the ietf-draft-07 preset")
}

func TestGitHubExampleShardsTargetsAndMerges(t *testing.T) {
	doc := load(t, "github-actions.yml")
	requirePinnedToCurrentMajors(t, "github-actions.yml", doc)
	require.Contains(t, doc, "on")
	jobs := m(t, doc["jobs"], "jobs")

	check := m(t, jobs["idemproof"], "jobs.idemproof")
	require.Equal(t, "ubuntu-latest", check["runs-on"])
	matrix := m(t, m(t, check["strategy"], "strategy")["matrix"], "strategy.matrix")
	require.Equal(t, []any{1, 2, 3}, matrix["shard"])
	require.Equal(t, []any{"idemproof.yaml"}, matrix["profile"])
	var action map[string]any
	for _, s := range steps(t, check) {
		if u, _ := s["uses"].(string); strings.HasPrefix(u, "idemproof/idemproof@") {
			action = m(t, s["with"], "with")
		}
	}
	require.NotNil(t, action, "the check job uses the idemproof Action")
	require.Equal(t, "${{ matrix.profile }}", action["profiles"])
	require.Equal(t, "${{ matrix.shard }}/3", action["shard"])
	require.Regexp(t, tag, action["version"], "installs a tagged release")
	require.Contains(t, action["artifact-name"], "${{ strategy.job-index }}", "one artifact per matrix job")

	merge := m(t, jobs["merge"], "jobs.merge")
	require.Equal(t, "idemproof", merge["needs"])
	var download, merged map[string]any
	for _, s := range steps(t, merge) {
		u, _ := s["uses"].(string)
		switch {
		case strings.HasPrefix(u, "actions/download-artifact@"):
			download = m(t, s["with"], "with")
		case strings.HasPrefix(u, "idemproof/idemproof@"):
			merged = m(t, s["with"], "with")
		}
	}
	require.NotNil(t, download)
	require.NotNil(t, merged)
	require.Equal(t, "idemproof-report-*", download["pattern"])
	require.Equal(t, download["path"].(string)+"/*/report.json", merged["merge"])
	require.Equal(t, action["version"], merged["version"])
}

func TestGitLabExampleMirrorsTheAction(t *testing.T) {
	doc := load(t, "gitlab-ci.yml")
	require.Empty(t, uses(doc))
	gh := load(t, "github-actions.yml")
	var ghVersion string
	for _, s := range steps(t, m(t, m(t, gh["jobs"], "jobs")["idemproof"], "job")) {
		if w, ok := s["with"].(map[string]any); ok && w["version"] != nil {
			ghVersion = w["version"].(string)
		}
	}

	job := m(t, doc["idempotency"], "idempotency")
	for _, key := range []string{"stage", "image", "script", "artifacts", "services", "parallel"} {
		require.Contains(t, job, key)
	}
	vars := m(t, job["variables"], "variables")
	require.Regexp(t, tag, vars["IDEMPROOF_VERSION"], "installs a tagged release")
	require.Equal(t, ghVersion, vars["IDEMPROOF_VERSION"], "the same release as the GitHub example")
	script := strings.Join(toStrings(t, job["script"]), "\n")
	require.Contains(t, script, `go install github.com/idemproof/idemproof/cmd/idemproof@"$IDEMPROOF_VERSION"`)
	require.Contains(t, script, `idemproof check --profile "$PROFILE" --shard "$SHARD" --report-dir "idemproof-report-$CI_NODE_INDEX"`)
	matrix := m(t, job["parallel"], "parallel")["matrix"].([]any)
	require.Equal(t, []any{"1/3", "2/3", "3/3"}, m(t, matrix[0], "matrix")["SHARD"])
	artifacts := m(t, job["artifacts"], "artifacts")
	require.Equal(t, "always", artifacts["when"], "reports are kept when a scenario fails")
	require.Equal(t, "idemproof-report-*/junit.xml", m(t, artifacts["reports"], "reports")["junit"])

	merge := m(t, doc["idempotency-merge"], "idempotency-merge")
	require.Equal(t, "idempotency", m(t, merge["needs"].([]any)[0], "needs")["job"])
	require.Contains(t, strings.Join(toStrings(t, merge["script"]), "\n"),
		"idemproof report merge --report-dir idemproof-report idemproof-report-*/report.json")
}

func toStrings(t *testing.T, v any) []string {
	t.Helper()
	list, ok := v.([]any)
	require.True(t, ok)
	var out []string
	for _, s := range list {
		out = append(out, s.(string))
	}
	return out
}

func TestActionDeclaresItsInputsAndRunsItsScripts(t *testing.T) {
	root := filepath.Join("..", "..")
	doc := load(t, filepath.Join(root, "action.yml"))
	requirePinnedToCurrentMajors(t, "action.yml", doc)
	for _, key := range []string{"name", "description", "inputs", "outputs", "runs"} {
		require.Contains(t, doc, key)
	}
	inputs := m(t, doc["inputs"], "inputs")
	for _, in := range []string{"profiles", "strict", "only", "labels", "skip", "baseline", "shard", "report-dir", "version", "merge"} {
		require.Contains(t, inputs, in)
		require.NotEmpty(t, m(t, inputs[in], in)["description"], in)
	}
	runs := m(t, doc["runs"], "runs")
	require.Equal(t, "composite", runs["using"])
	scripts := 0
	for _, s := range steps(t, runs) {
		run, _ := s["run"].(string)
		if u, ok := s["uses"].(string); ok {
			require.Empty(t, run, u)
			continue
		}
		require.Equal(t, "bash", s["shell"], "composite run steps name their shell")
		if script, ok := strings.CutPrefix(strings.Trim(run, `"`), "$GITHUB_ACTION_PATH/"); ok {
			fi, err := os.Stat(filepath.Join(root, script))
			require.NoError(t, err, "the step's script exists")
			require.NotZero(t, fi.Mode()&0o111, "%s is executable", script)
			scripts++
		}
		require.NotContains(t, run, "${{ inputs.", "inputs reach scripts through env, never pasted into the shell")
	}
	require.Equal(t, 4, scripts, "install, build, check, fail")
}

func TestReleaseWorkflowIsPinned(t *testing.T) {
	path := filepath.Join("..", "..", ".github", "workflows", "release.yml")
	doc := load(t, path)
	requirePinnedToCurrentMajors(t, path, doc)
	text, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(text), "ci/release/build \"$GITHUB_REF_NAME\" dist")
}

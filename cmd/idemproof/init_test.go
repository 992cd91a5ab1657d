package main_test

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/reference"
	"github.com/idemproof/idemproof/report"
)

func TestInitFromTheReferenceOpenAPIThenCheck(t *testing.T) {
	out := filepath.Join(t.TempDir(), "refunds.yaml")
	_, errOut, code := runCLI(t, "init", "--openapi", "../../docs/openapi.yaml", "--operation", "createRefund", "--out", out)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, errOut, "wrote "+out)
	p, err := profile.Load(out)
	require.NoError(t, err)
	require.Equal(t, "/v1/refunds", p.Operation.Path)

	// Writing over it needs --force.
	_, errOut, code = runCLI(t, "init", "--openapi", "../../docs/openapi.yaml", "--operation", "createRefund", "--out", out)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "exists: pick another file or add --force")

	// The reference server the document describes, with its default configuration.
	srv, err := reference.New()
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	api := httptest.NewServer(srv)
	t.Cleanup(api.Close)
	t.Setenv("API_URL", api.URL)

	stdout, errOut, code := runCLI(t, "check", "--profile", out, "--only", "replay/*,fingerprint/*,key/*,scope/*,storage/*,race/duplicate-*", "--seed", "9")
	require.Equal(t, 0, code, "the written profile passes the preflight and the catalogue:\n%s\n%s", stdout, errOut)
	require.Contains(t, stdout, "no failures")
	require.Regexp(t, `(?m)^PASS\s+scope/other-endpoint\s`, stdout, "the second keyed operation was found")
	require.Regexp(t, `(?m)^(PASS|INFO)\s+storage/validation-not-stored\s+\S+\s+\S+\s+validation 400 not stored: the corrected request executed`, stdout, "the validation error guessed from the schema: not stored (a policy the profile does not declare, so INFO)")
}

// A document that takes operations from another file by $ref (as the openapi-refunds
// example's does) is read from its file, its references followed, as scan reads it.
func TestInitFollowsLocalReferences(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "refunds.yaml")
	_, errOut, code := runCLI(t, "init", "--openapi", "../../examples/openapi-refunds/openapi.yaml", "--operation", "createRefund", "--out", out)
	require.Equal(t, 0, code, errOut)
	p, err := profile.Load(out)
	require.NoError(t, err)
	require.Equal(t, "/v1/refunds", p.Operation.Path)
	require.Equal(t, "Idempotency-Key", p.KeyHeader)
}

func TestInitTemplateAndErrors(t *testing.T) {
	stdout, _, code := runCLI(t, "init")
	require.Equal(t, 0, code)
	require.Contains(t, stdout, "# idemproof target profile")
	_, err := profile.Parse("template", []byte(stdout))
	require.NoError(t, err)

	_, errOut, code := runCLI(t, "init", "--operation", "x")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--operation needs --openapi")

	_, errOut, code = runCLI(t, "init", "--openapi", "../../docs/openapi.yaml")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "pick one with --operation: createInvoice (POST /v1/invoices), createRefund (POST /v1/refunds)")

	missing := filepath.Join(t.TempDir(), "nope.yaml")
	_, errOut, code = runCLI(t, "init", "--openapi", missing)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--openapi: open "+missing)
}

// The path from a first profile to a full one: `init --openapi` on the reference's own
// document, then the whole catalogue, ends with what to declare next, ranked by how many
// of the N/A scenarios each declaration would judge — in the console, report.md and
// report.html. Pinned: a declaration the catalogue starts needing, or a scenario that
// moves, shows here.
func TestInitThenCheckSaysWhatToDeclareNext(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	prof := filepath.Join(dir, "refunds.yaml")
	_, errOut, code := runCLI(t, "init", "--openapi", "../../docs/openapi.yaml", "--operation", "createRefund", "--out", prof)
	require.Equal(t, 0, code, errOut)
	srv, err := reference.New()
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	api := httptest.NewServer(srv)
	t.Cleanup(api.Close)
	// The profile reads its base_url from API_URL (not t.Setenv: the test is parallel).
	text, err := os.ReadFile(prof)
	require.NoError(t, err)
	// A patient client: an attempt a loaded machine times out is UNKNOWN (exit 3), which
	// this pin is not about.
	text = append([]byte(strings.Replace(string(text), "${API_URL:-http://127.0.0.1:8080}", api.URL, 1)), "\nclient_timeout: 10s\n"...)
	require.NoError(t, os.WriteFile(prof, text, 0o644))

	reports := filepath.Join(dir, "out")
	stdout, errOut, code := runCLI(t, "check", "--profile", prof, "--seed", "5", "--report-dir", reports)
	require.Equal(t, 0, code, "%s\n%s", stdout, errOut)
	require.Regexp(t, `(?m)^\s+idemproof-reference-refunds-createrefund\s+\d+\s+\d+\s+31\s`, stdout, "31 N/A")
	_, list, found := strings.Cut(stdout, "what to declare next (31 N/A); each line judges its scenarios once the lines above are declared too:\n")
	require.True(t, found, stdout)
	list, _, _ = strings.Cut(list, "\n\n")
	var rows []string
	for _, line := range strings.Split(list, "\n") {
		f := strings.Fields(line)
		require.GreaterOrEqual(t, len(f), 2, line)
		rows = append(rows, f[0]+" "+f[1])
	}
	require.Equal(t, []string{
		"+8 slow_operation", "+4 downstream", "+4 store", "+2 crash.after_commit", "+2 principals", "+2 fail_operation",
		"+2 retention", "+1 lock_timeout", "+1 crash.after_key", "+1 expect.replay_headers", "+1 keyed_methods",
		"+1 business_error", "+2 no",
	}, rows, stdout)
	require.Contains(t, list, "+8  slow_operation         a way to hold the work in flight: race/concurrent-pair, race/duplicate-concurrent, race/in-flight-not-fabricated, race/in-flight-other-payload, and 4 more (5 SAFETY, 1 MUST, 2 SHOULD)")
	require.Contains(t, list, "+1  crash.after_key        a crash after the key is recorded: recovery/crash-after-key (1 MUST)", "judged once lock_timeout, above it, is declared too")
	require.Contains(t, list, "+2  no declaration: replay/new-session, replay/after-restart (what they lack is a fact of the target: MCP sessions; a plain HTTP request belongs to none; a server idemproof starts and may kill and start again: transport mcp-stdio)")

	md, err := os.ReadFile(filepath.Join(reports, report.MarkdownFile))
	require.NoError(t, err)
	require.Contains(t, string(md), "### What to declare next (31 N/A)\n")
	require.Contains(t, string(md), "| `slow_operation`: a way to hold the work in flight | 8 | `race/concurrent-pair`, ")
	require.Contains(t, string(md), "| `business_error`: a request the API refuses after its checks | 1 | `storage/business-4xx` (1 POLICY) |")
	page, err := os.ReadFile(filepath.Join(reports, report.HTMLFile))
	require.NoError(t, err)
	require.Contains(t, string(page), "<h2>What to declare next (31 N/A)</h2>")
	require.Contains(t, string(page), `<tr><td><code>slow_operation</code>: a way to hold the work in flight</td><td class="n">8</td><td><a href="#r-race-concurrent-pair-idemproof-reference-refunds-createrefund">race/concurrent-pair</a>`)
}

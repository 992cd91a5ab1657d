package scanreport_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/scan"
	"github.com/idemproof/idemproof/scan/scanreport"
	"github.com/idemproof/idemproof/verdict"
)

// fixture is a scan of two tools: one probed, one not, with evidence a server wrote.
func fixture() *scan.Report {
	probed := &scan.Operation{Name: "refund", Key: &scan.Key{Place: scan.PlaceMeta, Name: "idempotency_key", Why: "its description"},
		Request: &scan.Request{Body: `{"amount":1}`, From: "the schema"}}
	skipped := &scan.Operation{Name: "wipe|all", Destructive: true, Skip: "destructive (destructiveHint: true)"}
	cells := func(vs ...verdict.Verdict) []scan.Cell {
		out := make([]scan.Cell, len(vs))
		for i, v := range vs {
			out[i] = scan.Cell{Check: scan.Checks[i], Verdict: v, Evidence: "evidence " + string(v)}
		}
		return out
	}
	r := cells(verdict.Pass, verdict.Fail, verdict.Pass, verdict.Unknown, verdict.NA)
	r[1].Evidence = "executed twice: <script>x</script> | *bold*"
	rep := &scan.Report{Tool: "idemproof test", Seed: 3, Started: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), DurationMS: 1500,
		Target: &scan.Target{Kind: scan.KindMCP, Source: "http://h/mcp", Endpoint: "http://h/mcp", Server: "fx 1", Operations: []*scan.Operation{probed, skipped},
			Notes: []string{"a note"}},
		Rows: []scan.Row{{Operation: probed, Cells: r, Calls: 9, PerExecution: "result.structuredContent.id"},
			{Operation: skipped, Cells: cells(verdict.NA, verdict.NA, verdict.NA, verdict.NA, verdict.NA)}},
		Headline: scan.Headline{Text: "0 of 2 write tools are safe to retry; 1 not probed", Cells: map[verdict.Verdict]int{verdict.Fail: 1}}}
	return rep
}

func TestConsole(t *testing.T) {
	t.Parallel()
	rep := fixture()
	var plan bytes.Buffer
	scanreport.WritePlan(&plan, rep.Target)
	require.Contains(t, plan.String(), "will probe 1 of 2:\n  refund\n")
	require.Contains(t, plan.String(), "      key        _meta.idempotency_key (its description)\n")
	require.Contains(t, plan.String(), "not probed 1:\n  wipe|all\n")
	require.Contains(t, plan.String(), "note: a note\n")
	require.Equal(t, "mcp http://h/mcp (fx 1): 2 tools; tools.idempotency (SEP-3182) not advertised", scanreport.Header(rep.Target))

	var out bytes.Buffer
	scanreport.WriteSummary(&out, rep)
	s := out.String()
	require.Regexp(t, `(?m)^refund\s+PASS\s+FAIL\s+PASS\s+UNKNOWN\s+N/A$`, s)
	require.Contains(t, s, "  replays after a lost answer    FAIL    executed twice: <script>x</script> | *bold*\n")
	require.Contains(t, s, "wipe|all — not probed: destructive (destructiveHint: true)\n")
	require.True(t, strings.HasSuffix(s, "\n0 of 2 write tools are safe to retry; 1 not probed\n"))
}

func TestFiles(t *testing.T) {
	t.Parallel()
	rep := fixture()
	dir := filepath.Join(t.TempDir(), "new")
	paths, err := scanreport.WriteDir(dir, rep)
	require.NoError(t, err)
	require.Len(t, paths, 3)

	var doc map[string]any
	data, err := os.ReadFile(filepath.Join(dir, "report.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &doc))
	require.Equal(t, "scan", doc["kind"])
	require.NotContains(t, doc["target"], "operations", "each operation is in its row")
	rows := doc["rows"].([]any)
	cell := rows[0].(map[string]any)["cells"].([]any)[1].(map[string]any)
	require.Equal(t, map[string]any{"check": "replays-after-lost-answer", "verdict": "FAIL", "evidence": "executed twice: <script>x</script> | *bold*"}, cell)

	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	require.NoError(t, err)
	require.Contains(t, string(md), "| `refund` | PASS | **FAIL** | PASS | **UNKNOWN** | N/A |")
	require.Contains(t, string(md), "- **FAIL** `refund` · replays after a lost answer: executed twice: &lt;script&gt;x&lt;/script&gt; \\| \\*bold\\*")
	require.Contains(t, string(md), "- `wipe|all`: destructive")

	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	require.NoError(t, err)
	html := string(page)
	require.NotContains(t, html, "<script>x</script>", "a server's text is escaped")
	require.Contains(t, html, "executed twice: &lt;script&gt;x&lt;/script&gt;")
	require.Contains(t, html, `<td class="v v-fail" data-operation="refund" data-check="replays-after-lost-answer" data-verdict="FAIL"`)
	require.Contains(t, html, ".v-fail { background:var(--fail-bg)", "check's style sheet")
	require.Contains(t, html, `<div class="status bad">1 failing cell(s)</div>`)
	require.NotContains(t, html, "<script", "no script")
}

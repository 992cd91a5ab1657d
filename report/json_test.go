package report_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/report"
	"github.com/idemproof/idemproof/verdict"
)

func TestJSONRoundTripAndStableOrder(t *testing.T) {
	rep := sampleReport()
	var a, b bytes.Buffer
	require.NoError(t, report.WriteJSON(&a, rep))
	require.NoError(t, report.WriteJSON(&b, rep))
	require.Equal(t, a.String(), b.String(), "the same report must serialise to the same bytes")

	out := a.String()
	require.True(t, strings.HasPrefix(out, "{\n  \"schema_version\": 1,\n  \"tool\": \"idemproof test\",\n  \"seed\": 42,"), out[:120])
	require.Less(t, strings.Index(out, `"scenario"`), strings.Index(out, `"verdict"`))

	back, err := report.ReadJSON(strings.NewReader(out))
	require.NoError(t, err)
	require.Len(t, back.Results, resultCount())
	require.Equal(t, verdict.Fail, back.Results[1].Verdict)
	require.Equal(t, 40.0, back.Results[1].DurationMS, "duration_ms is filled from Duration")
	require.Equal(t, 2, back.Results[1].Evidence.Record.Ledger["refund"])
	require.Equal(t, "k\x01ctl", back.Results[1].Evidence.Record.Journal[0].Key)
	require.Equal(t, 1, back.Results[1].Evidence.Categories[verdict.CatDuplicated])
	require.Zero(t, rep.Results[1].DurationMS, "WriteJSON must not modify its input")
}

func TestJSONFillsSchemaVersion(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, report.WriteJSON(&buf, &verdict.Report{Seed: 1}))
	var m map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &m))
	require.Equal(t, float64(verdict.ReportSchemaVersion), m["schema_version"])
}

func TestReadJSONRefusesUnknownSchema(t *testing.T) {
	_, err := report.ReadJSON(strings.NewReader(`{"schema_version": 99}`))
	require.ErrorContains(t, err, "schema_version 99")
}

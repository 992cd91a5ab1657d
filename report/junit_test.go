package report_test

import (
	"bytes"
	"encoding/xml"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/report"
)

func parseJUnit(t *testing.T, strict bool) report.JUnitSuites {
	t.Helper()
	rep := sampleReport()
	rep.Strict = strict
	var buf bytes.Buffer
	require.NoError(t, report.WriteJUnit(&buf, rep))
	var doc report.JUnitSuites
	require.NoError(t, xml.Unmarshal(buf.Bytes(), &doc), buf.String())
	return doc
}

func TestJUnitOneSuitePerTarget(t *testing.T) {
	doc := parseJUnit(t, false)
	require.Equal(t, resultCount(), doc.Tests)
	require.Equal(t, 1, doc.Failures)
	require.Equal(t, 1, doc.Errors)
	require.Equal(t, 1, doc.Skipped)
	require.Len(t, doc.Suites, 2)

	ref, other := doc.Suites[0], doc.Suites[1]
	require.Equal(t, "reference", ref.Name)
	require.Equal(t, 5, ref.Tests)
	require.Zero(t, ref.Failures+ref.Errors+ref.Skipped)
	require.Equal(t, "2026-11-29T09:00:00", ref.Timestamp)
	require.Contains(t, ref.Properties, report.JUnitProperty{Name: "seed", Value: "42"})

	require.Equal(t, "stripe-like", other.Name)
	require.Equal(t, 5, other.Tests)
	byName := map[string]report.JUnitCase{}
	for _, c := range other.Cases {
		byName[c.Name] = c
	}
	fail := byName["replay/after-503"]
	require.NotNil(t, fail.Failure)
	require.Equal(t, "FAIL", fail.Failure.Type)
	require.Equal(t, "idemproof.stripe-like.replay", fail.ClassName)
	require.Equal(t, "0.040", fail.Time)
	require.Contains(t, fail.Failure.Text, "evidence: duplicated=1")
	require.Contains(t, fail.Failure.Text, "ledger: refund=2")
	require.Contains(t, fail.Failure.Text, `K1=k\x01ctl`)

	require.NotNil(t, byName["before/503"].Error)
	require.Equal(t, "UNKNOWN", byName["before/503"].Error.Type)
	require.NotNil(t, byName["recovery/crash-after-key"].Skipped)
	require.Nil(t, byName["replay/marker"].Failure, "NON-STRICT passes unless strict")
	require.Contains(t, byName["replay/marker"].Props, report.JUnitProperty{Name: "verdict", Value: "NON-STRICT"})
}

func TestJUnitStrictFailsNonStrict(t *testing.T) {
	doc := parseJUnit(t, true)
	require.Equal(t, 2, doc.Failures)
	require.Equal(t, 1, doc.Errors, "UNKNOWN stays an error under strict")
	other := doc.Suites[1]
	for _, c := range other.Cases {
		if c.Name == "replay/marker" {
			require.NotNil(t, c.Failure)
			require.Equal(t, "NON-STRICT", c.Failure.Type)
		}
	}
}

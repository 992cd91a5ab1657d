package main_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/examples/openapi-refunds/notes"
	"github.com/idemproof/idemproof/scan"
	"github.com/idemproof/idemproof/verdict"
)

const (
	pass = verdict.Pass
	fail = verdict.Fail
	na   = verdict.NA
)

// TestScanMatrix pins what idemproof scan reports for openapi.yaml against the example
// server, each cell explained by the server (the reference in reference/, the notes API
// in notes/notes.go). Columns: takes a key, replays after a lost answer, refuses a
// changed request, one of two concurrent copies, annotation honest.
func TestScanMatrix(t *testing.T) {
	t.Parallel()
	want := map[string][5]verdict.Verdict{
		// The reference: the Idempotency-Key header parameter; the key inserted before
		// the work, a repeat replayed byte for byte (the same id), another amount 422, a
		// concurrent copy 409 and its retry replayed. POST claims no idempotence.
		"createRefund":  {pass, pass, pass, pass, na},
		"createInvoice": {pass, pass, pass, pass, na},
		// No key: the repeat adds another note (another id).
		"createNote": {fail, fail, na, na, na},
		// No key, idempotent by its method, yet each PUT stores a revision with an id of
		// its own: the method's claim is broken.
		"replaceNote": {fail, fail, na, na, fail},
		// A DELETE is not probed without --allow-destructive.
		"deleteNote": {na, na, na, na, na},
	}
	s, err := notes.New()
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	cfg := &scan.Config{OpenAPI: "openapi.yaml", BaseURL: srv.URL, Seed: 3}
	target, err := scan.Enumerate(ctx, cfg)
	require.NoError(t, err)
	rep, err := scan.Run(ctx, cfg, target)
	require.NoError(t, err)

	got := map[string][5]verdict.Verdict{}
	for _, row := range rep.Rows {
		var v [5]verdict.Verdict
		for i, c := range row.Cells {
			v[i] = c.Verdict
			t.Logf("%-13s %-28s %-7s %s", row.Operation.Name, scan.Checks[i], c.Verdict, c.Evidence)
		}
		got[row.Operation.Name] = v
	}
	require.Equal(t, want, got)
	require.Equal(t, "2 of 5 write operations are safe to retry (createInvoice, createRefund); 1 declares idempotence by method (PUT, DELETE) and executed twice: replaceNote; 1 not probed", rep.Headline.Text)
	require.Zero(t, s.Writes("DELETE"), "a DELETE is never sent")
}

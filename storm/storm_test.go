package storm_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/internal/embedded"
	"github.com/idemproof/idemproof/storm"
)

func startReference(t *testing.T, flaws ...string) *embedded.Target {
	t.Helper()
	tgt, err := embedded.Start(context.Background(), embedded.Config{Flaws: flaws, NoVendor: true})
	require.NoError(t, err)
	t.Cleanup(func() { tgt.Close() })
	return tgt
}

func TestStormAgainstTheCorrectReferenceFindsNothing(t *testing.T) {
	t.Parallel()
	tgt := startReference(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	rep, err := storm.Run(ctx, storm.Config{Profile: tgt.Profile, Seed: 7})
	require.NoError(t, err)
	t.Logf("%+v faulted %d attempts %d", rep.Counts, rep.Faulted, rep.Attempts)
	require.True(t, rep.Complete, rep.Interrupted)
	require.Equal(t, storm.DefaultOps, rep.Done)
	for _, c := range storm.Categories {
		require.Zero(t, rep.Counts[c], "%s: %v", c, rep.Findings[c])
	}
	require.Greater(t, rep.Faulted, 400, "about 30%% of 2,000 operations had their first answer lost")
	require.Positive(t, rep.P99MS)
}

func TestStormCatchesCheckThenSetAndShrinksIt(t *testing.T) {
	t.Parallel()
	tgt := startReference(t, "check-then-set")
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	rep, err := storm.Run(ctx, storm.Config{Profile: tgt.Profile, Seed: 7})
	require.NoError(t, err)
	t.Logf("%+v %+v", rep.Counts, rep.Shrunk)
	require.Positive(t, rep.Counts[storm.CatDuplicated])
	require.NotEmpty(t, rep.Shrunk)
	require.LessOrEqual(t, rep.Shrunk[0].Requests, 3)
}

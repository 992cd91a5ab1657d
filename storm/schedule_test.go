package storm_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/storm"
)

// 38.5: at the default size the dealt schedule holds enough contended keys — 2 to 4
// first attempts at once, held in flight — that a key recorded after the work shows a
// duplicate in every run, whatever the seed.
func TestTheDefaultScheduleMakesContendedKeysCommonForEverySeed(t *testing.T) {
	t.Parallel()
	mix := storm.Mix{FaultRate: 0.30, DuplicateRate: 0.05, ConcurrentRate: 0.15, OutageRate: 0.01}
	for seed := int64(1); seed <= 200; seed++ {
		contended, faulted := 0, 0
		for i := range storm.DefaultOps {
			s := storm.Deal(seed, i, mix, true, false)
			if s.Copies > 1 {
				contended++
				require.True(t, s.Hold, "contended copies are held in flight when slow_operation is declared")
			}
			if s.Fault != "" {
				faulted++
			}
			require.Empty(t, s.Outage, "no outage without store:")
		}
		require.GreaterOrEqual(t, contended, 200, "seed %d: contended keys at the default size", seed)
		require.InDelta(t, 600, faulted, 120, "seed %d: about 30%% of operations faulted", seed)
	}
}

func TestSchedulesReadAsTheyAreWritten(t *testing.T) {
	t.Parallel()
	for _, spec := range []string{"plain", "after-503", "after-truncate", "duplicate", "copies=2+hold", "copies=4", "outage=hang"} {
		s, err := storm.ParseSchedule(spec)
		require.NoError(t, err, spec)
		require.Equal(t, spec, s.String())
	}
	s, _ := storm.ParseSchedule("copies=2+hold")
	require.Equal(t, 2, s.Requests())
	s, _ = storm.ParseSchedule("duplicate")
	require.Equal(t, 2, s.Requests())
	for spec, want := range map[string]string{
		"after-999":           `unknown part "after-999"`,
		"copies=0":            "copies=0: want 1 to 8",
		"hold":                "hold needs copies=2 or more",
		"after-503+duplicate": "at most one of an after-upstream fault, duplicate and outage",
		"outage=flood":        `unknown part "outage=flood"`,
	} {
		_, err := storm.ParseSchedule(spec)
		require.ErrorContains(t, err, want, spec)
	}
}

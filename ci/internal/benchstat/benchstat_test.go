package benchstat_test

import (
	"testing"

	"github.com/idemproof/idemproof/ci/internal/benchstat"
	"github.com/stretchr/testify/require"
)

func TestOfIsTheMedianAndTheRange(t *testing.T) {
	require.Equal(t, benchstat.Spread{}, benchstat.Of(nil))
	require.Equal(t, benchstat.Spread{Median: 3, Min: 3, Max: 3}, benchstat.Of([]float64{3}))
	require.Equal(t, benchstat.Spread{Median: 2, Min: 1, Max: 9}, benchstat.Of([]float64{9, 1, 2}))
	require.Equal(t, benchstat.Spread{Median: 2.5, Min: 1, Max: 9}, benchstat.Of([]float64{9, 1, 3, 2}))

	v := []float64{9, 1, 2}
	benchstat.Of(v)
	require.Equal(t, []float64{9, 1, 2}, v, "the caller's values keep their order")
}

// Package benchstat summarises a quantity measured once per round of a benchmark, as
// ci/bench's summaries print it: the median and the range.
package benchstat

import "sort"

// Spread is the median and the range of a quantity over the rounds.
type Spread struct{ Median, Min, Max float64 }

// Of is the spread of v: the middle value, or the mean of the two middle ones; zero for
// no values.
func Of(v []float64) Spread {
	if len(v) == 0 {
		return Spread{}
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	k := len(s)
	med := s[k/2]
	if k%2 == 0 {
		med = (s[k/2-1] + s[k/2]) / 2
	}
	return Spread{Median: med, Min: s[0], Max: s[k-1]}
}

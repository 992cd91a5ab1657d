// Package suggest finds the name a person probably meant: the CLI's mistyped commands and
// flags, and a scan's --args entries that name no tool or argument. A leaf: it imports
// nothing of ours.
package suggest

import (
	"fmt"
	"strings"
)

// DidYouMean is `; did you mean "x"?` for the candidate Closest to word, or "".
func DidYouMean(word string, candidates []string) string {
	if best := Closest(word, candidates); best != "" {
		return fmt.Sprintf("; did you mean %q?", best)
	}
	return ""
}

// Closest is the candidate nearest to word, compared without regard to letter case: at
// most two edits away (one for words of up to four letters), or one that word is a
// prefix of; "" when none is that near.
func Closest(word string, candidates []string) string {
	limit := 2
	if len(word) <= 4 {
		limit = 1
	}
	best, bestDist := "", limit+1
	for _, c := range candidates {
		d := editDistance(strings.ToLower(word), strings.ToLower(c))
		if len(word) >= 3 && strings.HasPrefix(c, word) && d > 0 {
			d = min(d, limit)
		}
		if d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance with adjacent transpositions counted as one
// edit ("sede" → "seed").
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

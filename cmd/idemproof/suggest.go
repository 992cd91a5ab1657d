package main

import (
	"flag"
	"fmt"
	"strings"
)

// The CLI keeps the standard library's flag package: its parsing is what Go users
// expect, every subcommand already uses it, and the two things it lacks — "did you mean"
// for a mistyped subcommand or flag — are the two small helpers below, not a reason for a
// framework.

// suggestion is `; did you mean "x"?` for the candidate closest to word (at most two
// edits away, or one for words of up to four letters, or a prefix of it), or "".
func suggestion(word string, candidates []string) string {
	if best := closest(word, candidates); best != "" {
		return fmt.Sprintf("; did you mean %q?", best)
	}
	return ""
}

func closest(word string, candidates []string) string {
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

// flagError is the flag package's parse error in the CLI's words: "unknown flag -sede;
// did you mean --seed?" for an undefined flag (the closest one the set defines, if any is
// close), the error as the flag package says it otherwise ("invalid value "abc" for flag
// -seed: parse error").
func flagError(fs *flag.FlagSet, err error) string {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: ")
	if !ok {
		return err.Error()
	}
	name = strings.TrimLeft(name, "-")
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	msg := "unknown flag -" + name
	if best := closest(name, names); best != "" {
		msg += "; did you mean --" + best + "?"
	}
	return msg
}

// Package suggest finds the word a mistyped one was probably meant to be,
// for the "did you mean" of an error message: the server's (a schema's or
// a request's unknown member, a document's unknown field) and the CLI's
// (an unknown command).
package suggest

import "strings"

// Closest returns the candidate closest to word, or "" when none is close
// enough to be a typo of it: within one edit for a word of up to four
// letters, two for a longer one (an edit inserts, deletes or replaces a
// letter, or swaps two neighbours; letter case is free). A longer reach
// would suggest unrelated words: "ttl" is three edits from "title".
// Among equally close candidates the first wins. A word longer than
// maxWord gets no suggestion: the words suggested are names, and the
// distance costs the product of the lengths.
func Closest(word string, candidates []string) string {
	if len(word) > maxWord {
		return ""
	}
	limit := 2
	if len(word) <= 4 {
		limit = 1
	}
	lower := strings.ToLower(word)
	best, bestDist := "", limit+1
	for _, c := range candidates {
		if abs(len(c)-len(word)) >= bestDist {
			continue // at least that many insertions or deletions
		}
		if d := Distance(lower, strings.ToLower(c)); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

const maxWord = 64

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// Hint is Closest as the end of a server message: " (did you mean 'x'?)",
// or "" when no candidate is close.
func Hint(word string, candidates []string) string {
	if c := Closest(word, candidates); c != "" {
		return " (did you mean '" + c + "'?)"
	}
	return ""
}

// Distance is the optimal string alignment distance of a and b, in bytes:
// insertions, deletions, substitutions and swaps of neighbours, each 1.
func Distance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

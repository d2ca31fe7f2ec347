// Package closest finds the strings nearest to one a caller got wrong:
// the package names, paths and keys a correction names ("no such file
// dist/index.d.ts; closest: dist/types/index.d.ts").
package closest

import (
	"sort"
	"strings"
)

// Distance returns the edit distance (Levenshtein, by bytes) of a and b,
// or bound+1 as soon as it must exceed bound.
func Distance(a, b string, bound int) int {
	if abs(len(a)-len(b)) > bound {
		return bound + 1
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			rowMin = min(rowMin, cur[j])
		}
		if rowMin > bound {
			return bound + 1
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// Strings returns up to n of cands nearest to s, case-insensitively:
// those within an edit distance of a third of s's length (at least 2),
// nearest first, shorter first among equals. A candidate that ends with
// s's last path segment counts as near ("index.d.ts" finds
// "dist/index.d.ts"), since a wrong folder is the commonest miss. A
// candidate given twice is returned once.
func Strings(s string, cands []string, n int) []string {
	ls := strings.ToLower(s)
	bound := max(len(ls)/3, 2)
	base := ls[strings.LastIndexByte(ls, '/')+1:]
	type cand struct {
		s    string
		dist int
	}
	var out []cand
	for _, c := range cands {
		lc := strings.ToLower(c)
		d := Distance(ls, lc, bound)
		if base != "" && (strings.HasSuffix(lc, "/"+base) || strings.HasSuffix(strings.TrimSuffix(lc, "/"), "/"+base)) {
			d = min(d, bound)
		}
		if d <= bound {
			out = append(out, cand{c, d})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].dist != out[j].dist {
			return out[i].dist < out[j].dist
		}
		if len(out[i].s) != len(out[j].s) {
			return len(out[i].s) < len(out[j].s)
		}
		return out[i].s < out[j].s
	})
	var names []string
	for _, c := range out {
		if len(names) == n {
			break
		}
		if k := len(names); k > 0 && names[k-1] == c.s {
			continue // listed twice (the registry's search and the store's names): sorted next to each other
		}
		names = append(names, c.s)
	}
	return names
}

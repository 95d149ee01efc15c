package tools

import (
	"slices"
	"strings"
)

// NearestName is the name of names that name most likely misspells: the
// same once case, '_' and '-' are ignored (session_id for sessionId), or
// within an edit distance of about a third of its length; "" for none.
func NearestName(name string, names []string) string {
	if near := NearNames(name, names); len(near) > 0 {
		return near[0]
	}
	return ""
}

// NearNames are the names of names that name may misspell, by the rule of
// NearestName, nearest first.
func NearNames(name string, names []string) []string {
	fold := func(s string) string { return strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(s)) }
	type near struct {
		name string
		dist int
	}
	var found []near
	for _, n := range names {
		if fold(n) == fold(name) {
			return []string{n}
		}
		if d := editDistance(fold(n), fold(name)); d < len(name)/3+1 {
			found = append(found, near{n, d})
		}
	}
	slices.SortStableFunc(found, func(a, b near) int { return a.dist - b.dist })
	out := make([]string, len(found))
	for i, f := range found {
		out[i] = f.name
	}
	return out
}

// editDistance is the Levenshtein distance of a and b, by bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

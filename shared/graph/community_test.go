package graph_test

import (
	"fmt"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/graph"
)

// ring is a graph of n cliques of five entities each, every clique related
// to the next by one relation: the standard case where modularity merges
// neighbouring cliques at higher levels. Entity "c<i>m<j>" is member j of
// clique i.
func ring(t *testing.T, n int) *graph.Graph {
	var ctxs []graph.Context
	for i := range n {
		var members []string
		for j := range 5 {
			members = append(members, fmt.Sprintf("c%dm%d", i, j))
		}
		for range 3 {
			ctxs = append(ctxs, together(i, members...))
		}
		ctxs = append(ctxs, together(i, members[0], fmt.Sprintf("c%dm1", (i+1)%n)))
	}
	d := graph.Document{ID: "ring"}
	for i := range n {
		d.Chunks = append(d.Chunks, graph.Chunk{ID: fmt.Sprintf("ring#%d", i), Text: "x"})
	}
	return mustBuild(t, mustShard(t, d, listed{contexts: ctxs}))
}

func TestCommunitiesFindTheCliquesOfARingAndMergeThemAtHigherLevels(t *testing.T) {
	g := ring(t, 64)
	c := g.Communities(1)
	if len(c.Levels) < 2 {
		t.Fatalf("%d levels, want at least 2", len(c.Levels))
	}
	index := func(key string) int {
		i, ok := g.Index(graph.Key(key))
		if !ok {
			t.Fatalf("no entity %q", key)
		}
		return i
	}
	for i := range 64 {
		first := c.Levels[0][index(fmt.Sprintf("c%dm0", i))]
		for j := 1; j < 5; j++ {
			if got := c.Levels[0][index(fmt.Sprintf("c%dm%d", i, j))]; got != first {
				t.Errorf("level 0 splits clique %d", i)
			}
		}
	}
	for l := range len(c.Levels) - 1 {
		if c.Count(l+1) >= c.Count(l) {
			t.Errorf("level %d has %d communities, level %d %d: not coarser", l+1, c.Count(l+1), l, c.Count(l))
		}
		for a := range c.Levels[l] {
			for b := range c.Levels[l] {
				if c.Levels[l][a] == c.Levels[l][b] && c.Levels[l+1][a] != c.Levels[l+1][b] {
					t.Fatalf("entities %d and %d share a community at level %d, not at %d", a, b, l, l+1)
				}
			}
		}
	}
	t.Logf("communities per level: %v", counts(c))
}

func TestCommunitiesAreTheSameForTheSameSeed(t *testing.T) {
	g := ring(t, 12)
	a, b := g.Communities(7), g.Communities(7)
	if fmt.Sprint(a.Levels) != fmt.Sprint(b.Levels) {
		t.Error("two runs with one seed differ")
	}
}

func counts(c graph.Communities) []int {
	var out []int
	for l := range c.Levels {
		out = append(out, c.Count(l))
	}
	return out
}

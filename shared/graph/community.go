package graph

import (
	"math/rand/v2"
	"slices"
)

// Communities is a hierarchy of partitions of a graph's entities.
type Communities struct {
	// Levels[l][e] is the community of entity e at level l, numbered from 0
	// in the order of each community's first entity. Level 0 is the finest;
	// each level merges communities of the one below, so two entities in one
	// community at level l are in one at every level above.
	Levels [][]int32
}

// Count returns how many communities level l has.
func (c Communities) Count(l int) int {
	n := int32(0)
	for _, x := range c.Levels[l] {
		n = max(n, x+1)
	}
	return int(n)
}

// maxMovingPasses bounds the local-moving passes of one level.
const maxMovingPasses = 32

// Communities partitions g's entities by relation weight into communities at
// several levels, by the Louvain method with Leiden's refinement step
// (Traag, Waltman and van Eck 2019) reduced to its guarantee: each level
// first moves entities (or the communities of the level below) one at a time
// to the neighbouring community that most increases modularity, visiting them
// in an order drawn from seed, until no move helps; then splits every
// community into its connected parts, so no community is disconnected (plain
// Louvain can leave one bridged by a node that moved away); then merges each
// community into one node and repeats, until a level merges nothing. The
// result is deterministic for a given graph and seed. An entity without
// relations stays alone at every level.
func (g *Graph) Communities(seed uint64) Communities {
	r := rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))
	h := level{start: g.adjStart, to: g.adjTo, w: g.adjW, self: make([]float64, len(g.keys))}
	of := make([]int32, len(g.keys)) // entity -> node of h
	for i := range of {
		of[i] = int32(i)
	}
	var c Communities
	for {
		part := h.refine(h.move(r))
		k := 0
		for _, p := range part {
			k = max(k, int(p)+1)
		}
		if k == len(part) {
			return c
		}
		for e := range of {
			of[e] = part[of[e]]
		}
		c.Levels = append(c.Levels, slices.Clone(of))
		h = h.aggregate(part, k)
	}
}

// level is a weighted undirected graph in compressed sparse rows (each edge
// stored in both directions), with self-loop weights: the internal weight of
// the communities its nodes stand for.
type level struct {
	start []int
	to    []int32
	w     []float64
	self  []float64
}

func (h level) n() int { return len(h.self) }

// move runs the local-moving phase and returns each node's community.
func (h level) move(r *rand.Rand) []int32 {
	n := h.n()
	deg := make([]float64, n)
	var m2 float64
	for i := range n {
		deg[i] = 2 * h.self[i]
		for j := h.start[i]; j < h.start[i+1]; j++ {
			deg[i] += h.w[j]
		}
		m2 += deg[i]
	}
	comm := make([]int32, n)
	tot := slices.Clone(deg)
	for i := range comm {
		comm[i] = int32(i)
	}
	if m2 == 0 {
		return comm
	}
	order := r.Perm(n)
	kin := make([]float64, n)
	seen := make([]bool, n)
	var touched []int32
	for range maxMovingPasses {
		moved := false
		for _, i := range order {
			old := comm[i]
			tot[old] -= deg[i]
			touched = append(touched[:0], old)
			seen[old] = true
			for j := h.start[i]; j < h.start[i+1]; j++ {
				if int(h.to[j]) == i {
					continue
				}
				c := comm[h.to[j]]
				if !seen[c] {
					seen[c] = true
					touched = append(touched, c)
				}
				kin[c] += h.w[j]
			}
			// Stay unless a move strictly helps; of equal moves, the first
			// community met (adjacency order) wins.
			best, bestGain := old, kin[old]-tot[old]*deg[i]/m2
			for _, c := range touched {
				if gain := kin[c] - tot[c]*deg[i]/m2; gain > bestGain+1e-12 {
					best, bestGain = c, gain
				}
			}
			for _, c := range touched {
				kin[c], seen[c] = 0, false
			}
			comm[i] = best
			tot[best] += deg[i]
			moved = moved || best != old
		}
		if !moved {
			break
		}
	}
	return comm
}

// refine splits each community into its connected parts and numbers them in
// the order of their first node.
func (h level) refine(comm []int32) []int32 {
	n := h.n()
	part := make([]int32, n)
	for i := range part {
		part[i] = -1
	}
	next := int32(0)
	var stack []int
	for s := range n {
		if part[s] >= 0 {
			continue
		}
		part[s] = next
		stack = append(stack[:0], s)
		for len(stack) > 0 {
			i := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for j := h.start[i]; j < h.start[i+1]; j++ {
				if t := int(h.to[j]); part[t] < 0 && comm[t] == comm[i] {
					part[t] = next
					stack = append(stack, t)
				}
			}
		}
		next++
	}
	return part
}

// aggregate returns the graph of the k communities of part, edge weights
// summed, internal weights as self-loops.
func (h level) aggregate(part []int32, k int) level {
	out := level{start: make([]int, k+1), self: make([]float64, k)}
	rows := make([]map[int32]float64, k)
	for i := range h.n() {
		a := part[i]
		out.self[a] += h.self[i]
		for j := h.start[i]; j < h.start[i+1]; j++ {
			b := part[h.to[j]]
			if a == b {
				out.self[a] += h.w[j] / 2 // each internal edge is seen from both ends
				continue
			}
			if rows[a] == nil {
				rows[a] = map[int32]float64{}
			}
			rows[a][b] += h.w[j]
		}
	}
	for a, row := range rows {
		keys := make([]int32, 0, len(row))
		for b := range row {
			keys = append(keys, b)
		}
		slices.Sort(keys)
		for _, b := range keys {
			out.to = append(out.to, b)
			out.w = append(out.w, row[b])
		}
		out.start[a+1] = len(out.to)
	}
	return out
}

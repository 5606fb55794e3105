package vector

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/retrieval"
	"github.com/switchboard-dev/switchboard/shared/text"
)

// TestCompactionCopiesEachChunkLogarithmicallyOften plays a store's life,
// one ingest at a time, through the shard picking of compaction: the chunks
// all merges copy must stay within n·log2(n), not grow as n².
func TestCompactionCopiesEachChunkLogarithmicallyOften(t *testing.T) {
	tests := []struct {
		name            string
		ingests, chunks int
	}{
		{"single-passage documents", 50_000, 1},
		{"documents of 100 passages", 1_000, 100},
		{"documents of mixed sizes", 5_000, 0}, // 1 to 200 passages
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			m := &manifest{}
			total, copied, next := 0, 0, 0
			for range tt.ingests {
				n := cmp.Or(tt.chunks, 1+rng.IntN(200))
				next++
				m.Shards = append(m.Shards, shardRef{ID: fmt.Sprint(next), Chunks: n, Docs: 1})
				total += n
				if len(m.Shards) <= MaxShards {
					continue
				}
				picked, merged := map[string]bool{}, 0
				for _, sh := range pickShards(m, MaxShards) {
					picked[sh.ID] = true
					merged += sh.Chunks
				}
				m.Shards = slices.DeleteFunc(m.Shards, func(sh shardRef) bool { return picked[sh.ID] })
				next++
				m.Shards = append(m.Shards, shardRef{ID: fmt.Sprint(next), Chunks: merged})
				copied += merged
			}
			if bound := float64(total) * math.Log2(float64(total)); float64(copied) > bound {
				t.Errorf("merges copied %d chunks for %d ingested, more than n·log2(n) = %.0f", copied, total, bound)
			}
			if len(m.Shards) > MaxShards+1 {
				t.Errorf("%d shards left, want at most %d", len(m.Shards), MaxShards+1)
			}
		})
	}
}

func TestTermProfileCountsWhatTheTextsHold(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	words := strings.Fields("cell cells protein gene cancer mouse brain immune virus drug trial dose risk blood " +
		"heart liver tumor signal growth factor receptor a x IL6 running runs ran")
	var chunks []retrieval.Chunk
	for i := range 300 {
		var b strings.Builder
		for range 1 + rng.IntN(40) {
			b.WriteString(words[rng.IntN(len(words))] + " ")
		}
		for range rng.IntN(3) {
			b.WriteString(fmt.Sprintf("rare%c%c ", 'a'+rng.IntN(26), 'a'+rng.IntN(26)))
		}
		chunks = append(chunks, retrieval.Chunk{ID: fmt.Sprint(i), DocID: fmt.Sprint(i / 3), Text: b.String()})
	}
	// What the profile was before it was read from the postings: every
	// chunk's terms analysed again, counted once per chunk.
	counts := map[string]int{}
	for _, ch := range chunks {
		seen := map[string]bool{}
		for _, term := range text.Terms(ch.Text) {
			if !seen[term] && len(term) > 1 {
				seen[term] = true
				counts[term]++
			}
		}
	}
	terms := slices.SortedFunc(maps.Keys(counts), func(a, b string) int {
		return cmp.Or(cmp.Compare(counts[b], counts[a]), cmp.Compare(a, b))
	})
	if len(terms) <= ShardProfileTerms {
		t.Fatalf("only %d terms: the test needs more than %d", len(terms), ShardProfileTerms)
	}
	want := map[string]int{}
	for _, term := range terms[:ShardProfileTerms] {
		want[term] = counts[term]
	}
	seg, err := retrieval.NewSegment(chunks, 0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff(want, termProfile(seg)); diff != "" {
		t.Errorf("mismatch (-analysed again +from the postings):\n%s", diff)
	}
}

package colbert_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/colbert"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/multivector"
	"github.com/switchboard-dev/switchboard/shared/text"
)

// corpus is the chunks of the offline embedder's fixture documents (real
// prose: Go and zstd documentation), their token vectors, codecs of 1 and 2
// bits trained on a sample of them, and the chunks compressed by each codec.
// It is built once per test binary: training and compressing are what cost
// (minutes under -race if every test did them).
type corpus struct {
	ids    []string
	chunks []string
	tokens [][][]float32
	codecs map[int]*colbert.Codec
	shards map[int]colbert.Shard
}

// fixtureCentroids is the fixture codecs' centroid count: a quarter of
// what Train would choose for the corpus's 10,550 tokens, which keeps
// compression fidelity above the bounds tested below.
const fixtureCentroids = 256

var (
	fixtureOnce sync.Once
	fixture     corpus
	fixtureErr  error
)

func loadCorpus(t *testing.T) corpus {
	t.Helper()
	fixtureOnce.Do(func() { fixture, fixtureErr = buildCorpus() })
	if fixtureErr != nil {
		t.Fatal(fixtureErr)
	}
	return fixture
}

func buildCorpus() (corpus, error) {
	ctx := context.Background()
	var c corpus
	files, _ := filepath.Glob("../provider/offline/testdata/docs/*")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return c, err
		}
		ps, err := text.Passages(string(b), text.PassageOptions{Size: 1000, Overlap: 100})
		if err != nil {
			return c, err
		}
		for i, p := range ps {
			c.ids = append(c.ids, filepath.Base(f)+"#"+string(rune('a'+i%26))+strings.Repeat("'", i/26))
			c.chunks = append(c.chunks, p.Text)
		}
	}
	out, err := multivector.NewHashing(0).EmbedTokens(ctx, multivector.Request{Texts: c.chunks, Purpose: provider.ForDocument})
	if err != nil {
		return c, err
	}
	c.tokens = out.Tokens
	var all [][]float32
	for _, ts := range c.tokens {
		all = append(all, ts...)
	}
	c.codecs = map[int]*colbert.Codec{}
	c.shards = map[int]colbert.Shard{}
	for _, bits := range []int{1, 2} {
		codec, err := colbert.Train(ctx, all, &colbert.TrainOptions{Bits: bits, Seed: 7, Centroids: fixtureCentroids})
		if err != nil {
			return c, err
		}
		s := colbert.Shard{IDs: c.ids}
		for _, ts := range c.tokens {
			comp, err := codec.Compress(ts)
			if err != nil {
				return c, err
			}
			s.Tokens = append(s.Tokens, comp)
		}
		c.codecs[bits], c.shards[bits] = codec, s
	}
	return c, nil
}

// index returns an index of the corpus compressed by the codec of bits.
func (c corpus) index(t *testing.T, bits int, opts *colbert.IndexOptions) *colbert.Index {
	t.Helper()
	x := colbert.NewIndex(c.codecs[bits], opts)
	if err := x.Add(c.shards[bits]); err != nil {
		t.Fatal(err)
	}
	return x
}

func query(t *testing.T, q string) [][]float32 {
	t.Helper()
	out, err := multivector.NewHashing(0).EmbedTokens(context.Background(), multivector.Request{Texts: []string{q}, Purpose: provider.ForQuery})
	if err != nil {
		t.Fatal(err)
	}
	return out.Tokens[0]
}

func TestTrainIsDeterministicForASeed(t *testing.T) {
	c := loadCorpus(t)
	var all [][]float32
	for _, ts := range c.tokens[:10] {
		all = append(all, ts...)
	}
	train := func(seed uint64) []byte {
		codec, err := colbert.Train(context.Background(), all, &colbert.TrainOptions{Seed: seed, Centroids: 16})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := codec.MarshalBinary()
		return b
	}
	if a, b := train(1), train(1); !bytes.Equal(a, b) {
		t.Error("two trainings with seed 1 differ")
	}
	if a, b := train(1), train(2); bytes.Equal(a, b) {
		t.Error("trainings with seeds 1 and 2 are equal: the seed is ignored")
	}
}

// TestDecompressionKeepsVectorsClose measures the compression's fidelity:
// the mean cosine between each token vector and its decompressed form.
func TestDecompressionKeepsVectorsClose(t *testing.T) {
	c := loadCorpus(t)
	tests := []struct {
		name   string
		bits   int
		minCos float64
	}{
		{"two bits a dimension keep vectors close", 2, 0.75},
		{"one bit a dimension keeps them fairly close", 1, 0.60},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			codec := c.codecs[tt.bits]
			var sum float64
			n := 0
			for i, ts := range c.tokens {
				dec := codec.Decompress(nil, c.shards[tt.bits].Tokens[i])
				for i, v := range ts {
					var d float64
					for j, x := range v {
						d += float64(x) * float64(dec[i*len(v)+j])
					}
					sum += d
					n++
				}
			}
			if mean := sum / float64(n); mean < tt.minCos {
				t.Errorf("mean cosine %.3f over %d tokens, want at least %.2f", mean, n, tt.minCos)
			} else {
				t.Logf("mean cosine %.3f over %d tokens", mean, n)
			}
		})
	}
}

func TestCodecRoundTripsThroughItsFormat(t *testing.T) {
	codec := loadCorpus(t).codecs[2]
	b, err := codec.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	back, err := colbert.ParseCodec(b)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := back.MarshalBinary()
	if !bytes.Equal(b, b2) || back.ID() != codec.ID() || back.Dims() != codec.Dims() || back.Bits() != 2 || back.Centroids() != fixtureCentroids {
		t.Errorf("parsed codec differs: id %x/%x, %d dims, %d bits, %d centroids", back.ID(), codec.ID(), back.Dims(), back.Bits(), back.Centroids())
	}
}

func TestParseCodecRefusesMalformedData(t *testing.T) {
	good, _ := loadCorpus(t).codecs[1].MarshalBinary()
	edit := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty data", nil, "not a codec"},
		{"another magic", edit(func(b []byte) []byte { b[0] = 'X'; return b }), "not a codec"},
		{"a later version", edit(func(b []byte) []byte { b[4] = 2; return b }), "version 2"},
		{"three bits", edit(func(b []byte) []byte { b[5] = 3; return b }), "3 bits"},
		{"a truncated body", good[:len(good)-9], "bytes, want"},
		{"a flipped bit", edit(func(b []byte) []byte { b[100] ^= 1; return b }), "checksum mismatch"},
		{"centroids past the bound", edit(func(b []byte) []byte { binary.LittleEndian.PutUint32(b[8:], colbert.MaxCentroids+1); return b }), "2049 centroids"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := colbert.ParseCodec(tt.data)
			if !errors.Is(err, colbert.ErrCorrupt) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want ErrCorrupt with %q", err, tt.want)
			}
		})
	}
}

func TestShardRoundTripsThroughItsFormat(t *testing.T) {
	c := loadCorpus(t)
	codec := c.codecs[2]
	s := colbert.Shard{IDs: c.ids[:20]}
	for _, ts := range c.tokens[:20] {
		comp, _ := codec.Compress(ts)
		s.Tokens = append(s.Tokens, comp)
	}
	b, err := codec.EncodeShard(s)
	if err != nil {
		t.Fatal(err)
	}
	back, err := codec.DecodeShard(b)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := codec.EncodeShard(back)
	if !bytes.Equal(b, b2) {
		t.Error("a decoded shard encodes differently")
	}
	if _, err := c.codecs[1].DecodeShard(b); err == nil || !strings.Contains(err.Error(), "not this store's") {
		t.Errorf("decoding with another codec: err = %v, want a refusal", err)
	}
	b[len(b)-10] ^= 1
	if _, err := codec.DecodeShard(b); !errors.Is(err, colbert.ErrCorrupt) {
		t.Errorf("a flipped bit: err = %v, want ErrCorrupt", err)
	}
}

func TestSearchFindsTheChunkAQuestionQuotes(t *testing.T) {
	c := loadCorpus(t)
	tests := []struct {
		name  string
		chunk int
		bits  int
	}{
		{"at two bits", 3, 2},
		{"at one bit", 3, 1},
		{"another chunk at two bits", 17, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := c.index(t, tt.bits, nil)
			words := strings.Fields(c.chunks[tt.chunk])
			q := query(t, strings.Join(words[:min(len(words), 20)], " "))
			res, err := x.Search(context.Background(), q, &colbert.SearchOptions{K: 3, Candidates: 20})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Hits) == 0 || res.Hits[0].ID != c.ids[tt.chunk] {
				t.Fatalf("hits %v, want %s first", res.Hits, c.ids[tt.chunk])
			}
			if res.Candidates == 0 || res.Candidates >= x.Len() {
				t.Errorf("%d candidates of %d chunks: centroid pruning did not prune", res.Candidates, x.Len())
			}
			t.Logf("%d candidates of %d chunks", res.Candidates, x.Len())
		})
	}
}

func TestRerankScoresOnlyTheGivenCandidates(t *testing.T) {
	c := loadCorpus(t)
	x := c.index(t, 2, nil)
	q := query(t, c.chunks[5])
	ids := []string{c.ids[1], c.ids[5], "no such chunk", c.ids[9]}
	res, err := x.Rerank(context.Background(), q, ids, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != 3 || res.Hits[0].ID != c.ids[5] || res.Candidates != 3 {
		t.Fatalf("hits %v (%d candidates), want 3 with %s first", res.Hits, res.Candidates, c.ids[5])
	}
	want := int64(len(q) * (len(c.tokens[1]) + len(c.tokens[5]) + len(c.tokens[9])))
	if res.TokenInteractions != want {
		t.Errorf("token interactions %d, want %d (query tokens × chunk tokens)", res.TokenInteractions, want)
	}
}

// TestCompressedRankingFollowsExactMaxSim compares the top 10 of MaxSim over
// decompressed vectors with the top 10 over the originals. Compression
// raises scores (a maximum over noisier vectors), so ranks are compared, not scores.
func TestCompressedRankingFollowsExactMaxSim(t *testing.T) {
	c := loadCorpus(t)
	tests := []struct {
		name       string
		bits       int
		minOverlap float64
	}{
		{"two bits keep most of the exact top 10", 2, 0.7},
		{"one bit keeps over half of it", 1, 0.5},
	}
	questions := []string{
		"how does the compression level change speed and memory",
		"which settings does GODEBUG control",
		"dictionary training for small data",
		"how to build the compiler",
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := c.index(t, tt.bits, nil)
			var overlap float64
			for _, qs := range questions {
				q := query(t, qs)
				res, err := x.Rerank(context.Background(), q, c.ids, nil)
				if err != nil {
					t.Fatal(err)
				}
				exact := make([]colbert.Hit, len(c.ids))
				for i := range c.ids {
					exact[i] = colbert.Hit{ID: c.ids[i], Score: colbert.MaxSim(q, c.tokens[i])}
				}
				slices.SortFunc(exact, func(a, b colbert.Hit) int { return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.ID, b.ID)) })
				top := map[string]bool{}
				for _, h := range exact[:10] {
					top[h.ID] = true
				}
				for _, h := range res.Hits {
					if top[h.ID] {
						overlap++
					}
				}
			}
			overlap /= float64(10 * len(questions))
			t.Logf("top-10 overlap %.2f", overlap)
			if overlap < tt.minOverlap {
				t.Errorf("top-10 overlap with exact MaxSim %.2f, want at least %.2f", overlap, tt.minOverlap)
			}
		})
	}
}

func TestThresholdDropsWeakInteractions(t *testing.T) {
	c := loadCorpus(t)
	x := c.index(t, 2, nil)
	q := query(t, "zstd compression dictionary")
	plain, err := x.Rerank(context.Background(), q, c.ids[:30], &colbert.SearchOptions{K: 30})
	if err != nil {
		t.Fatal(err)
	}
	strict, err := x.Rerank(context.Background(), q, c.ids[:30], &colbert.SearchOptions{K: 30, Threshold: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	lower := 0
	for i := range strict.Hits {
		if strict.Hits[i].Score < plain.Hits[i].Score {
			lower++
		}
	}
	if lower == 0 {
		t.Error("a threshold of 0.9 lowered no score")
	}
}

func TestSearchRefusesBadRequests(t *testing.T) {
	c := loadCorpus(t)
	x := c.index(t, 2, nil)
	q := query(t, "memory")
	tests := []struct {
		name  string
		query [][]float32
		opts  *colbert.SearchOptions
		field string
	}{
		{"an empty query", nil, nil, "query"},
		{"a query of too many tokens", make([][]float32, multivector.MaxQueryTokens+1), nil, "query"},
		{"a query of other dimensions", [][]float32{{1, 0}}, nil, "query"},
		{"a negative threshold", q, &colbert.SearchOptions{Threshold: -0.1}, "interaction_threshold"},
		{"too many hits", q, &colbert.SearchOptions{K: colbert.MaxK + 1}, "top_k"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := x.Search(context.Background(), tt.query, tt.opts)
			if _, field, _ := fault.Public(err); fault.KindOf(err) != fault.KindInvalid || field != tt.field {
				t.Errorf("err = %v, want invalid %s", err, tt.field)
			}
		})
	}
}

func TestSearchStopsWhenTheContextEnds(t *testing.T) {
	c := loadCorpus(t)
	x := c.index(t, 2, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := x.Rerank(ctx, query(t, "memory"), c.ids, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("rerank: err = %v, want context.Canceled", err)
	}
	if _, err := x.Search(ctx, query(t, "memory"), nil); !errors.Is(err, context.Canceled) {
		t.Errorf("search: err = %v, want context.Canceled", err)
	}
}

func TestAddRefusesAShardPastTheMemoryBound(t *testing.T) {
	c := loadCorpus(t)
	full := c.index(t, 2, nil)
	x := colbert.NewIndex(c.codecs[2], &colbert.IndexOptions{MaxBytes: full.Bytes() - 1})
	s := c.shards[2]
	err := x.Add(s)
	if fault.KindOf(err) != fault.KindQuotaExceeded {
		t.Fatalf("err = %v, want quota exceeded", err)
	}
	if x.Len() != 0 || x.Tokens() != 0 {
		t.Errorf("a refused shard left %d chunks, %d tokens", x.Len(), x.Tokens())
	}
	if err := full.Add(colbert.Shard{IDs: c.ids[:1], Tokens: s.Tokens[:1]}); err == nil || !strings.Contains(err.Error(), "already in the index") {
		t.Errorf("adding a chunk twice: err = %v, want a refusal", err)
	}
}

func TestCompressionRatio(t *testing.T) {
	c := loadCorpus(t)
	tests := []struct {
		name string
		bits int
		want float64
	}{
		{"two bits: 512 bytes over 2+32", 2, 512.0 / 34},
		{"one bit: 512 bytes over 2+16", 1, 512.0 / 18},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := c.index(t, tt.bits, nil).CompressionRatio(); math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("ratio %v, want %v", got, tt.want)
			}
		})
	}
}

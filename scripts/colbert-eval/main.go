// Command colbert-eval measures late interaction on a BEIR collection with
// the offline multi-vector embedder: index size beside float32, how closely
// MaxSim over compressed vectors follows MaxSim over the originals, query
// latency, and nDCG@10 of late interaction reranking a hybrid run's top 100
// (the run retrieval-eval writes) and searching alone by centroid pruning:
//
//	go run ./scripts/retrieval-eval --data ../shared/eval/scifact --split test --run /tmp/hybrid.trec
//	go run ./scripts/colbert-eval --data ../shared/eval/scifact --split test --run /tmp/hybrid.trec [--bits 2] [--centroids 1024]
//
// Each corpus document is embedded as its title, a blank line and its text
// (at most 512 tokens), as one chunk.
package main

import (
	"bufio"
	"cmp"
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/colbert"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/multivector"
	"github.com/switchboard-dev/switchboard/shared/retrieval/beir"
)

func main() {
	data := flag.String("data", "", "BEIR `folder`")
	split := flag.String("split", "test", "qrels `split`")
	runPath := flag.String("run", "", "TREC run `file` of the hybrid retriever (100 documents a query)")
	bits := flag.Int("bits", 2, "residual `bits` a dimension, 1 or 2")
	centroids := flag.Int("centroids", 1024, "`number` of centroids")
	flag.Parse()
	if *data == "" || *runPath == "" {
		fmt.Fprintln(os.Stderr, "usage: go run ./scripts/colbert-eval --data DIR --split test --run HYBRID.trec [--bits 2] [--centroids 1024]")
		os.Exit(2)
	}
	if err := run(*data, *split, *runPath, *bits, *centroids); err != nil {
		fmt.Fprintln(os.Stderr, "colbert-eval:", err)
		os.Exit(1)
	}
}

func run(data, split, runPath string, bits, centroids int) error {
	ctx := context.Background()
	ds, err := beir.Load(data, split)
	if err != nil {
		return err
	}
	hybrid, err := readRun(runPath)
	if err != nil {
		return err
	}
	emb := multivector.NewHashing(0)
	texts := make([]string, len(ds.Corpus))
	ids := make([]string, len(ds.Corpus))
	for i, d := range ds.Corpus {
		texts[i], ids[i] = d.Title+"\n\n"+d.Text, d.ID
	}
	start := time.Now()
	tokens, err := embed(ctx, emb, texts)
	if err != nil {
		return err
	}
	var all [][]float32
	for _, t := range tokens {
		all = append(all, t...)
	}
	fmt.Printf("embedded %d documents, %d tokens (%s/%s, %d dims) in %s\n", len(texts), len(all), emb.Provider(), emb.Model(), emb.Dims(), time.Since(start).Round(time.Millisecond))
	start = time.Now()
	codec, err := colbert.Train(ctx, all, &colbert.TrainOptions{Bits: bits, Centroids: centroids, Seed: 1})
	if err != nil {
		return err
	}
	fmt.Printf("trained %d centroids, %d bits, in %s\n", codec.Centroids(), codec.Bits(), time.Since(start).Round(time.Millisecond))
	shard := colbert.Shard{IDs: ids}
	for _, t := range tokens {
		c, err := codec.Compress(t)
		if err != nil {
			return err
		}
		shard.Tokens = append(shard.Tokens, c)
	}
	enc, err := codec.EncodeShard(shard)
	if err != nil {
		return err
	}
	codecBytes, _ := codec.MarshalBinary()
	x := colbert.NewIndex(codec, &colbert.IndexOptions{MaxBytes: 1 << 30})
	if err := x.Add(shard); err != nil {
		return err
	}
	f32 := len(all) * codec.Dims() * 4
	fmt.Printf("size: float32 %d bytes (%d a token); shard %d bytes (%.1f a token) + codec %d bytes; compression_ratio %.2f (tokens), %.2f (shard+codec); index in memory %d bytes\n",
		f32, codec.Dims()*4, len(enc), float64(len(enc))/float64(len(all)), len(codecBytes), x.CompressionRatio(), float64(f32)/float64(len(enc)+len(codecBytes)), x.Bytes())

	byID := map[string]int{}
	for i, id := range ids {
		byID[id] = i
	}
	rerank, exact, search := beir.Run{}, beir.Run{}, beir.Run{}
	var rerankTimes, searchTimes []time.Duration
	var overlap, rho float64
	var interactions, searchInteractions int64
	for _, q := range ds.Queries {
		out, err := emb.EmbedTokens(ctx, multivector.Request{Texts: []string{q.Text}, Purpose: provider.ForQuery})
		if err != nil {
			return err
		}
		qt := out.Tokens[0]
		if len(qt) == 0 {
			continue
		}
		cands := hybrid[q.ID]
		t0 := time.Now()
		res, err := x.Rerank(ctx, qt, cands, &colbert.SearchOptions{K: len(cands)})
		if err != nil {
			return err
		}
		rerankTimes = append(rerankTimes, time.Since(t0))
		interactions += res.TokenInteractions
		rerank[q.ID] = hitIDs(res.Hits)
		ex := make([]colbert.Hit, 0, len(cands))
		for _, id := range cands {
			if i, ok := byID[id]; ok {
				ex = append(ex, colbert.Hit{ID: id, Score: colbert.MaxSim(qt, tokens[i])})
			}
		}
		slices.SortFunc(ex, func(a, b colbert.Hit) int { return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.ID, b.ID)) })
		exact[q.ID] = hitIDs(ex)
		overlap += topOverlap(exact[q.ID], rerank[q.ID], 10)
		rho += spearman(exact[q.ID], rerank[q.ID])
		t0 = time.Now()
		sres, err := x.Search(ctx, qt, &colbert.SearchOptions{K: 100})
		if err != nil {
			return err
		}
		searchTimes = append(searchTimes, time.Since(t0))
		searchInteractions += sres.TokenInteractions
		search[q.ID] = hitIDs(sres.Hits)
	}
	n := float64(len(rerank))
	fmt.Printf("%d queries\n", len(rerank))
	fmt.Printf("hybrid (the run given):                 ndcg@10=%.4f recall@100=%.4f\n", beir.MeanNDCG(hybrid, ds.Qrels, 10), beir.MeanRecall(hybrid, ds.Qrels, 100))
	fmt.Printf("late interaction reranking its top 100: ndcg@10=%.4f (exact MaxSim, uncompressed: %.4f); p50 %s; %.0f token interactions a query\n",
		beir.MeanNDCG(rerank, ds.Qrels, 10), beir.MeanNDCG(exact, ds.Qrels, 10), p50(rerankTimes), float64(interactions)/n)
	fmt.Printf("compressed vs exact MaxSim over the top 100: recall@10 %.3f, Spearman rho %.3f\n", overlap/n, rho/n)
	fmt.Printf("late interaction alone (centroid pruning, %d candidates): ndcg@10=%.4f recall@100=%.4f; p50 %s; %.0f token interactions a query\n",
		colbert.DefaultCandidates, beir.MeanNDCG(search, ds.Qrels, 10), beir.MeanRecall(search, ds.Qrels, 100), p50(searchTimes), float64(searchInteractions)/n)
	return nil
}

// embed embeds texts as documents in batches within the embedder's bound.
func embed(ctx context.Context, emb multivector.Embedder, texts []string) ([][][]float32, error) {
	batch := multivector.MaxBatchTokens / multivector.MaxDocumentTokens
	var out [][][]float32
	for i := 0; i < len(texts); i += batch {
		e, err := emb.EmbedTokens(ctx, multivector.Request{Texts: texts[i:min(i+batch, len(texts))], Purpose: provider.ForDocument})
		if err != nil {
			return nil, err
		}
		out = append(out, e.Tokens...)
	}
	return out, nil
}

// readRun reads a TREC run file: "qid Q0 docid rank score tag" lines, in rank order.
func readRun(path string) (beir.Run, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := beir.Run{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 {
			continue
		}
		r[fields[0]] = append(r[fields[0]], fields[2])
	}
	return r, sc.Err()
}

func hitIDs(hits []colbert.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

// topOverlap returns the share of a's first k found in b's first k.
func topOverlap(a, b []string, k int) float64 {
	in := map[string]bool{}
	for _, id := range a[:min(k, len(a))] {
		in[id] = true
	}
	n := 0
	for _, id := range b[:min(k, len(b))] {
		if in[id] {
			n++
		}
	}
	return float64(n) / float64(max(1, min(k, len(a))))
}

// spearman returns the rank correlation of two orderings of the same ids.
func spearman(a, b []string) float64 {
	pos := map[string]int{}
	for i, id := range b {
		pos[id] = i
	}
	n := float64(len(a))
	if n < 2 {
		return 1
	}
	var d2 float64
	for i, id := range a {
		d := float64(i - pos[id])
		d2 += d * d
	}
	return 1 - 6*d2/(n*(n*n-1))
}

func p50(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2].Round(time.Microsecond)
}

package vector

import (
	"cmp"
	"context"
	"maps"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/graph"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/retrieval"
	"github.com/switchboard-dev/switchboard/shared/tenant"
	"github.com/switchboard-dev/switchboard/shared/text"
	"github.com/switchboard-dev/switchboard/shared/vector/query"
)

// Store selection by score, when a search names no stores (the seed's "smart
// table selection" done without a model call: offline, and whenever the
// model's choice fails; see [StoreSelection]): each of the caller's stores built
// with the configured embedder is scored against the question's terms
// (text.Terms):
//
//	score(store) = sum over distinct question terms t of idf(t) * (described(t) + profile(t))
//
// where described(t) is 1 when t occurs in the store's alias or description,
// profile(t) is t's weight in the store's term profile (its most frequent
// terms, weighted 0..1 relative to the most frequent; kept in the store
// record, summed from its shards), and idf(t) = ln(1 + N/n(t)) over the N
// candidate stores, n(t) of which mention t, so a term every store has counts
// for less. The stores scoring at least [SelectRatio] of the best are searched,
// at most [MaxSelectedStores], best first. When no store scores (nothing in
// the question matches any description or profile), the
// [MaxSelectedStores] largest stores are searched rather than none. A tenant
// with one store always searches it.
const (
	SelectRatio       = 0.5
	MaxSelectedStores = 3
)

// MaxRankDepth is [query.MaxRankDepth].
const MaxRankDepth = query.MaxRankDepth

// Retrieve searches the caller's vector stores for the passages that best
// answer a question: the stores named, or those store selection picks. The
// results of several stores are ranked together (one BM25 collection, one
// fusion) and deduplicated by content; each names its store.
func (s *Service) Retrieve(ctx context.Context, c tenant.Caller, in RetrieveInput) (RetrieveOutput, error) {
	k := in.TopK
	switch {
	case k == 0:
		k = DefaultTopK
	case k < 1 || k > MaxTopK:
		return RetrieveOutput{}, fault.Invalid("top_k", "%d is outside 1..%d", k, MaxTopK)
	}
	return s.retrieve(ctx, c, in, k, false)
}

// RankDocuments is [Service.Retrieve] ranking documents (each scored by its
// best chunk) instead of chunks, up to [MaxRankDepth] deep: what an
// evaluation run needs. It shares everything else with Retrieve: store
// selection, manifests, cache, fan-out and the default ranking settings.
func (s *Service) RankDocuments(ctx context.Context, c tenant.Caller, in RetrieveInput, k int) (RetrieveOutput, error) {
	if k < 1 || k > MaxRankDepth {
		return RetrieveOutput{}, fault.Invalid("k", "%d is outside 1..%d", k, MaxRankDepth)
	}
	return s.retrieve(ctx, c, in, k, true)
}

func validateQuery(in RetrieveInput) (retrieval.Mode, error) {
	if strings.TrimSpace(in.Question) == "" {
		return "", fault.Invalid("question", "must not be empty")
	}
	if n := utf8.RuneCountInString(in.Question); n > MaxQuestionChars {
		return "", fault.Invalid("question", "is %d characters, more than %d", n, MaxQuestionChars)
	}
	mode := retrieval.Mode(in.Mode)
	if mode == "" {
		mode = retrieval.ModeHybrid
	}
	if !slices.Contains(Modes, string(mode)) {
		return "", fault.Invalid("mode", "%q is not a mode: use bm25, vector or hybrid", in.Mode)
	}
	if len(in.Stores) > MaxSearchStores {
		return "", fault.Invalid("stores", "names %d stores, more than %d", len(in.Stores), MaxSearchStores)
	}
	for _, a := range in.Stores {
		if err := ValidateAlias("stores", a); err != nil {
			return "", err
		}
	}
	if err := ValidateFilter("filter", in.Filter); err != nil {
		return "", err
	}
	if in.NProbe < 0 || in.NProbe > retrieval.MaxClusters {
		return "", fault.Invalid("nprobe", "%d is outside 1..%d", in.NProbe, retrieval.MaxClusters)
	}
	if d := in.GraphTraversalDepth; d != nil {
		if *d < 0 || *d > graph.MaxDepth {
			return "", fault.Invalid("graph_traversal_depth", "%d is outside 0..%d", *d, graph.MaxDepth)
		}
		if mode != retrieval.ModeHybrid {
			return "", fault.Invalid("mode", "must be hybrid (or omitted) with graph_traversal_depth: the graph's ranking is fused with hybrid search")
		}
	}
	return mode, nil
}

func (s *Service) retrieve(ctx context.Context, c tenant.Caller, in RetrieveInput, k int, perDoc bool) (RetrieveOutput, error) {
	mode, err := validateQuery(in)
	if err != nil {
		return RetrieveOutput{}, err
	}
	emb, err := provider.EmbedderFor(s.emb, in.EmbeddingModel)
	if err != nil {
		return RetrieveOutput{}, err
	}
	out := RetrieveOutput{Documents: []Document{}, SearchedStores: []string{}, ContextInput: in.Question, Mode: string(mode)}
	recs, sel, err := s.searchStores(ctx, c, in, emb)
	out.Selection = sel
	if err != nil || len(recs) == 0 {
		return out, err
	}
	// Hybrid fusion weighs the vector ranking by how good the embedder's
	// rankings are: retrieval tunes it per embedder.
	q := GroupQuery{Text: in.Question, Mode: mode, PerDoc: perDoc, Filter: in.Filter, Tuning: retrieval.TuningFor(recs[0].Provider),
		NProbe: cmp.Or(in.NProbe, s.nprobe)}
	// Ask for more than k so that dropping duplicates still leaves k: the
	// best k+extra of a ranking begin with its best k.
	q.K = min(2*k, k+20)
	if in.GraphTraversalDepth != nil {
		q.K = max(q.K, graphPool) // the depth fused with the graph's ranking
	}
	if mode != retrieval.ModeBM25 {
		e, err := emb.Embed(ctx, provider.EmbedRequest{Texts: []string{in.Question}, Purpose: provider.ForQuery})
		if err != nil {
			return RetrieveOutput{}, fault.Unavailable(err, "embedding the question with %s/%s failed; retry, or search with mode bm25", emb.Provider(), emb.Model())
		}
		if len(e.Vectors) != 1 || len(e.Vectors[0]) != recs[0].Dims {
			return RetrieveOutput{}, fault.Unavailable(nil, "embedder %s/%s returned no vector of %d dimensions for the question", e.Provider, e.Model, recs[0].Dims)
		}
		q.Vector, out.Provider, out.Model = e.Vectors[0], e.Provider, e.Model
	}
	var hits []ScoredChunk
	for attempt := 0; ; attempt++ {
		shards, dead, err := s.searchShards(ctx, c, recs)
		if err == nil {
			q.Dead = dead
			hits, err = s.fanOut(ctx, c, shards, q)
		}
		if isNotFound(err) && attempt < 3 {
			recs, err = s.reload(ctx, c, recs) // a newer manifest dropped a shard meanwhile
			if err != nil {
				return RetrieveOutput{}, err
			}
			continue
		}
		if err != nil {
			return RetrieveOutput{}, searchFailed(err)
		}
		break
	}
	for _, r := range recs {
		out.SearchedStores = append(out.SearchedStores, r.Alias)
	}
	if d := in.GraphTraversalDepth; d != nil {
		var info GraphSearch
		if hits, info, err = s.fuseGraph(ctx, recs, emb, in.Question, *d, hits, in.Filter, perDoc, q.K); err != nil {
			return RetrieveOutput{}, searchFailed(err)
		}
		out.Graph = &info
	}
	seen := map[string]bool{}
	for _, h := range hits {
		key := h.Text
		if perDoc {
			key = h.Store + "\x00" + h.DocID
		}
		if seen[key] {
			continue // the same passage in two stores, or ingested twice
		}
		seen[key] = true
		md := maps.Clone(h.Metadata)
		if md == nil {
			md = map[string]string{}
		}
		out.Documents = append(out.Documents, Document{DocID: h.DocID, ChunkID: h.ChunkID, Content: h.Text,
			Score: h.Score, Metadata: md, Store: h.Store})
		if out.Graph != nil && h.Segment == -1 {
			out.Graph.GraphOnly++
		}
		if len(out.Documents) == k {
			break
		}
	}
	return out, nil
}

func searchFailed(err error) error {
	if fault.KindOf(err) != fault.KindInternal {
		return err
	}
	return fault.Unavailable(err, "searching failed; retry")
}

// searchStores returns the stores a search covers: those named (each must
// exist and match the embedder emb), or those built with emb that store
// selection picks, with how it picked them (nil when the stores were named).
func (s *Service) searchStores(ctx context.Context, c tenant.Caller, in RetrieveInput, emb provider.Embedder) ([]storeRec, *StoreSelection, error) {
	if len(in.Stores) > 0 {
		var recs []storeRec
		seen := map[string]bool{}
		for _, a := range in.Stores {
			if seen[a] {
				continue
			}
			seen[a] = true
			r, err := s.loadStore(ctx, c, a, false)
			if err != nil {
				return nil, nil, err
			}
			if err := embedderFits(r, emb); err != nil {
				return nil, nil, err
			}
			recs = append(recs, r)
		}
		return recs, nil, nil
	}
	all, err := s.allStores(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	var usable []storeRec
	for _, r := range all {
		if embedderFits(r, emb) == nil && r.Chunks > 0 {
			usable = append(usable, r)
		}
	}
	recs, sel := s.chooseStores(ctx, c, in.Question, usable)
	return recs, sel, nil
}

// selectStores applies the store selection rule above.
func selectStores(question string, recs []storeRec) []storeRec {
	if len(recs) <= 1 {
		return recs
	}
	return cutRanked(rankStores(question, recs))
}

// cutRanked keeps the stores of a ranking (rankStores) that the rule above
// searches: those scoring at least SelectRatio of the best, at most
// MaxSelectedStores.
func cutRanked(ranked []storeRec, scores []float64) []storeRec {
	var out []storeRec
	for i, r := range ranked {
		if len(out) == MaxSelectedStores || scores[0] > 0 && scores[i] < SelectRatio*scores[0] {
			break
		}
		out = append(out, r)
	}
	return out
}

// rankStores orders recs by their store selection score, best first (by
// size when none scores), and returns the scores in that order.
func rankStores(question string, recs []storeRec) ([]storeRec, []float64) {
	terms := slices.Compact(slices.Sorted(slices.Values(text.Terms(question))))
	described := make([]map[string]bool, len(recs))
	for i, r := range recs {
		described[i] = map[string]bool{}
		for _, t := range text.Terms(strings.NewReplacer("-", " ", "_", " ").Replace(r.Alias) + "\n" + r.Description) {
			described[i][t] = true
		}
	}
	scores := make([]float64, len(recs))
	for _, t := range terms {
		n := 0
		for i, r := range recs {
			if described[i][t] || r.Profile[t] > 0 {
				n++
			}
		}
		if n == 0 {
			continue
		}
		idf := math.Log(1 + float64(len(recs))/float64(n))
		for i, r := range recs {
			w := r.Profile[t]
			if described[i][t] {
				w++
			}
			scores[i] += idf * w
		}
	}
	order := make([]int, len(recs))
	for i := range order {
		order[i] = i
	}
	best := slices.Max(scores)
	slices.SortFunc(order, func(a, b int) int {
		if best == 0 {
			return cmp.Or(cmp.Compare(recs[b].Chunks, recs[a].Chunks), cmp.Compare(recs[a].Alias, recs[b].Alias))
		}
		return cmp.Or(cmp.Compare(scores[b], scores[a]), cmp.Compare(recs[a].Alias, recs[b].Alias))
	})
	ranked, rankedScores := make([]storeRec, len(order)), make([]float64, len(order))
	for i, j := range order {
		ranked[i], rankedScores[i] = recs[j], scores[j]
	}
	return ranked, rankedScores
}

// searchShards returns the live shards of stores and the ids of the dead
// chunks inside them.
func (s *Service) searchShards(ctx context.Context, c tenant.Caller, recs []storeRec) ([]GroupShard, map[string]bool, error) {
	var shards []GroupShard
	var dead map[string]bool
	for _, r := range recs {
		m, err := s.loadManifest(ctx, r)
		if err != nil {
			return nil, nil, err
		}
		for _, sh := range m.Shards {
			shards = append(shards, GroupShard{Store: r.Alias, Key: sh.Key, ETag: sh.ETag, Size: sh.Size, Chunks: sh.Chunks})
		}
		switch {
		case len(m.dead) == 0:
		case dead == nil:
			dead = m.dead // shared, never written
		default:
			merged := maps.Clone(dead)
			maps.Copy(merged, m.dead)
			dead = merged
		}
	}
	return shards, dead, nil
}

// reload reads the records of stores again.
func (s *Service) reload(ctx context.Context, c tenant.Caller, recs []storeRec) ([]storeRec, error) {
	out := make([]storeRec, len(recs))
	for i, r := range recs {
		var err error
		if out[i], err = s.loadStore(ctx, c, r.Alias, false); err != nil {
			return nil, err
		}
	}
	return out, nil
}

package graph_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/graph"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/retrieval"
)

// listed is an [graph.Extractor] that returns a fixed extraction: every
// sentence's entities all related, as the heuristic relates them.
type listed struct {
	contexts []graph.Context
	aliases  map[string]string
}

func (listed) Name() string { return "listed" }

func (l listed) Extract(context.Context, graph.Document) (graph.Extraction, error) {
	return graph.Extraction{Contexts: l.contexts, Aliases: l.aliases}, nil
}

// together is a context of chunk in which all names relate to each other.
func together(chunk int, names ...string) graph.Context {
	c := graph.Context{Chunk: chunk, Entities: names}
	for i := range names {
		for j := i + 1; j < len(names); j++ {
			c.Relations = append(c.Relations, [2]int{i, j})
		}
	}
	return c
}

// doc returns a document of n chunks named <id>#0, <id>#1, ...
func doc(id string, texts ...string) graph.Document {
	d := graph.Document{ID: id}
	for i, t := range texts {
		d.Chunks = append(d.Chunks, graph.Chunk{ID: fmt.Sprintf("%s#%d", id, i), Text: t})
	}
	return d
}

func mustShard(t testing.TB, d graph.Document, ex graph.Extractor) *graph.Shard {
	t.Helper()
	s, err := graph.NewShard(context.Background(), d, ex, nil, graph.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustBuild(t testing.TB, shards ...*graph.Shard) *graph.Graph {
	t.Helper()
	g, err := graph.Build(shards)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func keys(s *graph.Shard) []string {
	var out []string
	for _, e := range s.Entities {
		out = append(out, e.Key)
	}
	return out
}

func TestHeuristicFindsNamesDomainTermsPhrasesAndAcronyms(t *testing.T) {
	tests := []struct {
		name, text string
		want, not  []string
	}{
		{"capitalised words make one name", "Tovar Kelmin works for Brasco Industries.",
			[]string{"tovar kelmin", "brasco industri"}, []string{"tovar", "work"}},
		{"a sentence's first English word is no name", "Reciprocal rank fusion is simple.",
			[]string{"reciproc rank fusion"}, nil},
		{"a rare word is a domain term", "The walk computes an eigenvector of the matrix.",
			[]string{"eigenvector"}, []string{"walk", "comput"}},
		{"a run of two words between stop words is a phrase", "We weigh each entity graph by its damping factor.",
			[]string{"entiti graph", "damp factor"}, nil},
		{"an acronym merges with the words it abbreviates", "Personalized PageRank (PPR) scores chunks. The PPR walk restarts often.",
			[]string{"person pagerank"}, []string{"ppr"}},
		{"numbers and punctuation cut names", "In 2019, Quelton grew; Brasco Labs moved.",
			[]string{"quelton", "brasco lab"}, []string{"2019"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := keys(mustShard(t, doc("d", tt.text), graph.Heuristic{}))
			for _, k := range tt.want {
				if !slices.Contains(got, k) {
					t.Errorf("entities %q lack %q", got, k)
				}
			}
			for _, k := range tt.not {
				if slices.Contains(got, k) {
					t.Errorf("entities %q hold %q", got, k)
				}
			}
		})
	}
}

func TestAnAcronymsEntityIsNamedByItsExpansion(t *testing.T) {
	s := mustShard(t, doc("d", "Personalized PageRank (PPR) scores chunks. PPR restarts at seeds. PPR converges."), graph.Heuristic{})
	i := slices.Index(keys(s), "person pagerank")
	if i < 0 {
		t.Fatalf("no entity for the expansion in %q", keys(s))
	}
	if got := s.Entities[i].Name; got != "Personalized PageRank" {
		t.Errorf("name %q, want the expansion", got)
	}
	if diff := cmp.Diff([]graph.Alias{{Short: "ppr", Long: "person pagerank"}}, s.Aliases); diff != "" {
		t.Errorf("aliases mismatch (-want +got):\n%s", diff)
	}
}

func TestNewShardBoundsWhatTheExtractorProduces(t *testing.T) {
	// 40 entities in one chunk, each sentence relating a window of 5.
	var ctxs []graph.Context
	for i := range 40 {
		var names []string
		for j := range 5 {
			names = append(names, fmt.Sprintf("Entity%c%c", 'a'+(i+j)%26, 'a'+(i+j)/26))
		}
		ctxs = append(ctxs, together(0, names...))
	}
	ex := listed{contexts: ctxs}
	tests := []struct {
		name  string
		lim   graph.Limits
		check func(*graph.Shard) error
	}{
		{"entities per document", graph.Limits{MaxEntities: 10}, func(s *graph.Shard) error {
			if len(s.Entities) != 10 {
				return fmt.Errorf("%d entities, want 10", len(s.Entities))
			}
			return nil
		}},
		{"entities per chunk", graph.Limits{MaxEntitiesPerChunk: 7}, func(s *graph.Shard) error {
			if len(s.Entities) != 7 {
				return fmt.Errorf("%d entities linked to the one chunk, want 7", len(s.Entities))
			}
			return nil
		}},
		{"edges per entity", graph.Limits{MaxEdgesPerEntity: 1}, func(s *graph.Shard) error {
			if len(s.Edges) > len(s.Entities) {
				return fmt.Errorf("%d edges for %d entities keeping one each", len(s.Edges), len(s.Entities))
			}
			return nil
		}},
		{"edges per document", graph.Limits{MaxEdges: 3}, func(s *graph.Shard) error {
			if len(s.Edges) != 3 {
				return fmt.Errorf("%d edges, want 3", len(s.Edges))
			}
			return nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := graph.NewShard(context.Background(), doc("d", "text"), ex, nil, tt.lim)
			if err != nil {
				t.Fatal(err)
			}
			if err := tt.check(s); err != nil {
				t.Error(err)
			}
			if _, err := s.MarshalBinary(); err != nil {
				t.Errorf("a bounded shard does not encode: %v", err)
			}
		})
	}
}

func TestNewShardRefusesAnExtractionThatBreaksItsContract(t *testing.T) {
	tests := []struct {
		name string
		ctx  graph.Context
	}{
		{"a context names a chunk the document lacks", graph.Context{Chunk: 2, Entities: []string{"Quelton"}}},
		{"a relation names an entity the context lacks", graph.Context{Chunk: 0, Entities: []string{"Quelton"}, Relations: [][2]int{{0, 1}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := graph.NewShard(context.Background(), doc("d", "a", "b"), listed{contexts: []graph.Context{tt.ctx}}, nil, graph.Limits{})
			if err == nil {
				t.Fatal("no error")
			}
		})
	}
}

func TestBuildIsTheUnionOfTheLiveDocumentsShards(t *testing.T) {
	a := mustShard(t, doc("a", "x"), listed{contexts: []graph.Context{together(0, "Quelton", "Brasco Labs")}})
	b := mustShard(t, doc("b", "y"), listed{contexts: []graph.Context{together(0, "Brasco Labs", "Tovar Kelmin")}})
	both, onlyA := mustBuild(t, a, b), mustBuild(t, a)
	if reversed := mustBuild(t, b, a); !cmp.Equal(entityInfos(both), entityInfos(reversed)) {
		t.Error("the union depends on the order of the shards")
	}
	if _, ok := onlyA.Entity("tovar kelmin"); ok {
		t.Error("an entity only a deleted document named is still in the graph")
	}
	got, _ := onlyA.Entity("brasco lab")
	if diff := cmp.Diff([]string{"a#0"}, got.Chunks); diff != "" {
		t.Errorf("chunks of a shared entity after deleting b mismatch (-want +got):\n%s", diff)
	}
	if _, ok := got.Related["tovar kelmin"]; ok {
		t.Error("a deleted document's relation is still in the graph")
	}
	all, _ := both.Entity("brasco lab")
	if diff := cmp.Diff([]string{"a#0", "b#0"}, all.Chunks); diff != "" {
		t.Errorf("chunks of a shared entity mismatch (-want +got):\n%s", diff)
	}
	if _, err := graph.Build([]*graph.Shard{a, a}); err == nil {
		t.Error("two shards of one document were accepted")
	}
}

func entityInfos(g *graph.Graph) map[string]graph.EntityInfo {
	out := map[string]graph.EntityInfo{}
	for _, k := range []string{"quelton", "brasco lab", "tovar kelmin"} {
		out[k], _ = g.Entity(k)
	}
	return out
}

func TestBuildMergesAnAcronymWithTheExpansionAnotherDocumentDefines(t *testing.T) {
	def := mustShard(t, doc("def", "Personalized PageRank (PPR) ranks chunks."), graph.Heuristic{})
	use := mustShard(t, doc("use", "Quelton runs PPR nightly."), graph.Heuristic{})
	g := mustBuild(t, def, use)
	if _, ok := g.Entity("ppr"); ok {
		t.Error("the acronym is an entity of its own")
	}
	e, _ := g.Entity("person pagerank")
	if diff := cmp.Diff([]string{"def#0", "use#0"}, e.Chunks); diff != "" {
		t.Errorf("chunks of the merged entity mismatch (-want +got):\n%s", diff)
	}
	if e.Name != "Personalized PageRank" {
		t.Errorf("name %q, want the expansion", e.Name)
	}
}

func TestRelationsThatOccurTogetherMoreThanChanceWeighMore(t *testing.T) {
	// Quelton and Brasco always occur together; Quelton and Dramor once, of
	// Dramor's many contexts.
	ctxs := []graph.Context{together(0, "Quelton", "Brasco"), together(0, "Quelton", "Brasco"), together(0, "Quelton", "Dramor")}
	for range 6 {
		ctxs = append(ctxs, together(0, "Dramor", "Stelix"))
	}
	g := mustBuild(t, mustShard(t, doc("d", "x"), listed{contexts: ctxs}))
	q, _ := g.Entity("quelton")
	if !(q.Related["brasco"] > q.Related["dramor"]) {
		t.Errorf("weights %v: the exclusive pair does not weigh more", q.Related)
	}
}

// chain is a graph of four documents: Alpha relates to Beta (doc 1), Beta
// to Gamma (doc 2), Gamma to Delta (doc 3), and doc 4 only names Delta.
func chain(t *testing.T) *graph.Graph {
	return mustBuild(t,
		mustShard(t, doc("d1", "x"), listed{contexts: []graph.Context{together(0, "Alpha", "Beta")}}),
		mustShard(t, doc("d2", "x"), listed{contexts: []graph.Context{together(0, "Beta", "Gamma")}}),
		mustShard(t, doc("d3", "x"), listed{contexts: []graph.Context{together(0, "Gamma", "Delta")}}),
		mustShard(t, doc("d4", "x"), listed{contexts: []graph.Context{together(0, "Delta")}}),
	)
}

func docs(hits []retrieval.Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.DocID)
	}
	return out
}

func TestLocalReachesChunksAsManyRelationsAwayAsTheDepthAllows(t *testing.T) {
	g := chain(t)
	tests := []struct {
		depth int
		want  []string
	}{
		{0, []string{"d1"}},
		{1, []string{"d1", "d2"}},
		{2, []string{"d1", "d2", "d3"}},
		{3, []string{"d1", "d2", "d3", "d4"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("depth %d", tt.depth), func(t *testing.T) {
			o := graph.DefaultLocalOptions
			o.Depth = tt.depth
			res, err := g.Local(context.Background(), "What is Alpha?", o)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, docs(res.Hits)); diff != "" {
				t.Errorf("documents mismatch (-want +got):\n%s", diff)
			}
			if !res.Converged {
				t.Errorf("did not converge in %d iterations", res.Iterations)
			}
		})
	}
}

func TestLocalRefusesADepthOutOfRange(t *testing.T) {
	for _, depth := range []int{-1, graph.MaxDepth + 1} {
		o := graph.DefaultLocalOptions
		o.Depth = depth
		if _, err := chain(t).Local(context.Background(), "Alpha", o); err == nil {
			t.Errorf("depth %d accepted", depth)
		}
	}
}

func TestLocalMatchesNothingForAQuestionNamingNoEntity(t *testing.T) {
	res, err := chain(t).Local(context.Background(), "What is the weather?", graph.DefaultLocalOptions)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != 0 || len(res.Seeds) != 0 {
		t.Errorf("hits %v seeds %v for a question naming no entity", res.Hits, res.Seeds)
	}
}

func TestMatchFindsAMisspeltEntityByEmbeddingWhenTheGraphHasVectors(t *testing.T) {
	emb := offline.NewEmbedder(256)
	d := doc("d", "Tovar Kelmin works for Brasco Industries in Quelton.")
	s, err := graph.NewShard(context.Background(), d, graph.Heuristic{}, emb, graph.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	g := mustBuild(t, s)
	q := "Where does Tovar Kelmim work?"
	byTerms, err := g.Match(context.Background(), q, nil, 8)
	if err != nil {
		t.Fatal(err)
	}
	byMeaning, err := g.Match(context.Background(), q, emb, 8)
	if err != nil {
		t.Fatal(err)
	}
	if len(byTerms) != 0 {
		t.Errorf("terms alone matched %v", byTerms)
	}
	if len(byMeaning) == 0 || byMeaning[0].Key != "tovar kelmin" || byMeaning[0].By != "embedding" {
		t.Errorf("by embedding matched %+v, want tovar kelmin first", byMeaning)
	}
}

func TestFuseScoresEachChunkByReciprocalRanks(t *testing.T) {
	hybrid := []retrieval.Hit{{ChunkID: "a", DocID: "A", Segment: 0, Index: 3}, {ChunkID: "b", DocID: "B", Segment: 0, Index: 1}}
	graphHits := []retrieval.Hit{{ChunkID: "c", DocID: "C", Segment: -1, Index: -1}, {ChunkID: "b", DocID: "B", Segment: -1, Index: -1}}
	got := graph.Fuse(10, 1, hybrid, graphHits)
	want := []retrieval.Hit{
		{ChunkID: "b", DocID: "B", Score: 1.0/62 + 1.0/62, Segment: 0, Index: 1},
		{ChunkID: "a", DocID: "A", Score: 1.0 / 61, Segment: 0, Index: 3},
		{ChunkID: "c", DocID: "C", Score: 1.0 / 61, Segment: -1, Index: -1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fused mismatch (-want +got):\n%s", diff)
	}
}

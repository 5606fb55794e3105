package graph_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/graph"
	"github.com/switchboard-dev/switchboard/shared/graph/multihop"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
)

// scripted is a [provider.Generator] standing in for a hosted model: reply
// maps each request to its text.
type scripted struct {
	reply func(provider.GenerateRequest) (string, error)
}

func (s scripted) Generate(_ context.Context, req provider.GenerateRequest) (provider.Generation, error) {
	text, err := s.reply(req)
	return provider.Generation{Text: text, Provider: "test", Model: "scripted"}, err
}

func replying(text string) scripted {
	return scripted{func(provider.GenerateRequest) (string, error) { return text, nil }}
}

func TestPromptedBuildsAShardFromTheModelsValidatedReply(t *testing.T) {
	reply := "```json\n" + `{"entities":[{"name":"Tovar Kelmin"},{"name":"Brasco Industries"},{"name":"Quelton"}],
		"relations":[{"source":"Tovar Kelmin","target":"Brasco Industries"}]}` + "\n```"
	s, err := graph.NewShard(context.Background(), doc("d", "any text"), graph.Prompted{Generator: replying(reply), Model: "scripted"}, nil, graph.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"brasco industri", "quelton", "tovar kelmin"}, keys(s)); diff != "" {
		t.Errorf("entities mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]graph.Edge{{A: 0, B: 2, Count: 1}}, s.Edges); diff != "" {
		t.Errorf("edges mismatch (-want +got):\n%s", diff)
	}
	if s.Extractor != "prompted:scripted" {
		t.Errorf("extractor %q", s.Extractor)
	}
}

func TestPromptedRefusesARepliesThatBreakTheSchema(t *testing.T) {
	many := `{"entities":[` + strings.Repeat(`{"name":"x"},`, graph.MaxReplyEntities) + `{"name":"y"}]}`
	tests := []struct {
		name, reply, field string
	}{
		{"prose", "Tovar Kelmin works for Brasco.", "not the JSON object"},
		{"an unknown field", `{"entities":[{"name":"a","kind":"person"}]}`, "unknown field"},
		{"an empty name", `{"entities":[{"name":" "}]}`, "entities[0].name"},
		{"a relation to an unlisted entity", `{"entities":[{"name":"a"}],"relations":[{"source":"a","target":"b"}]}`, "relations[0].target"},
		{"too many entities", many, "entities: 33"},
		{"a second object", `{"entities":[]} {"entities":[]}`, "text after"},
		{"the offline generator's extractive answer", "", "not the JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var gen provider.Generator = replying(tt.reply)
			if tt.reply == "" {
				gen = offline.NewGenerator()
			}
			_, err := graph.NewShard(context.Background(), doc("d", "Tovar Kelmin works for Brasco."), graph.Prompted{Generator: gen}, nil, graph.Limits{})
			if err == nil || !strings.Contains(err.Error(), tt.field) {
				t.Errorf("error %v, want one naming %q", err, tt.field)
			}
		})
	}
}

func TestPromptedFallsBackPerChunkOnAMalformedReplyAndCountsIt(t *testing.T) {
	good := `{"entities":[{"name":"Tovar Kelmin"},{"name":"Brasco Industries"}],"relations":[{"source":"Tovar Kelmin","target":"Brasco Industries"}]}`
	var systems []string
	var mu sync.Mutex
	gen := scripted{func(req provider.GenerateRequest) (string, error) {
		mu.Lock()
		systems = append(systems, req.System)
		mu.Unlock()
		switch {
		case strings.Contains(req.Documents[0], "Kelmin"):
			return good, nil
		case strings.Contains(req.Documents[0], "Quelton"):
			return "Quelton Harbour lies in Varnia.", nil // prose, not the JSON asked for
		}
		return "", errors.New("throttled")
	}}
	d := doc("d", "Tovar Kelmin works for Brasco Industries.", "Quelton Harbour is a port of Varnia.", "Ardent Labs studies Prellin Syndrome.")
	tests := []struct {
		name          string
		fallback      graph.Extractor
		wantFallbacks int
		wantErr       string
	}{
		{"with a fallback, the chunks the model failed are extracted offline and counted", graph.Heuristic{}, 2, ""},
		{"without one, the first failed chunk fails the extraction", nil, 0, "chunk 1: the model's reply: not the JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			systems = nil
			s, err := graph.NewShard(context.Background(), d, graph.Prompted{Generator: gen, Model: "m", System: "Extract, tenant style.", Fallback: tt.fallback}, nil, graph.Limits{})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Fallbacks != tt.wantFallbacks {
				t.Errorf("fallbacks %d, want %d", s.Fallbacks, tt.wantFallbacks)
			}
			for _, k := range []string{"tovar kelmin", "quelton harbour", "ardent lab"} {
				if !slices.Contains(keys(s), k) {
					t.Errorf("entities %v lack %q", keys(s), k)
				}
			}
			for _, sys := range systems {
				if sys != "Extract, tenant style." {
					t.Errorf("the model was sent system prompt %q, want the one given", sys)
				}
			}
			b, err := s.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			back, err := graph.DecodeShard(b)
			if err != nil || back.Fallbacks != tt.wantFallbacks {
				t.Errorf("decoded fallbacks %v, %v; want %d", back, err, tt.wantFallbacks)
			}
		})
	}
}

func TestPromptedSendsAtMostItsBoundOfChunksToTheModel(t *testing.T) {
	var calls atomic.Int64
	gen := scripted{func(provider.GenerateRequest) (string, error) {
		calls.Add(1)
		return `{"entities":[{"name":"Brasco Industries"}]}`, nil
	}}
	texts := make([]string, graph.MaxPromptedChunks+3)
	for i := range texts {
		texts[i] = fmt.Sprintf("Brasco Industries opened Plant %d.", i)
	}
	s, err := graph.NewShard(context.Background(), doc("d", texts...), graph.Prompted{Generator: gen, Fallback: graph.Heuristic{}}, nil, graph.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if calls.Load() != graph.MaxPromptedChunks || s.Fallbacks != 3 {
		t.Errorf("%d calls and %d fallbacks, want %d and 3", calls.Load(), s.Fallbacks, graph.MaxPromptedChunks)
	}
}

// world is the graph, communities and chunk texts of a small multi-hop world.
func world(t *testing.T) (*graph.Graph, graph.Communities, graph.ChunkTexts) {
	c := multihop.Generate(3, multihop.Options{People: 40, Companies: 6, Cities: 4, Questions: 1})
	texts := map[string]string{}
	var shards []*graph.Shard
	for _, d := range c.Docs {
		texts[d.ID+"#0"] = d.Text
		shards = append(shards, mustShard(t, doc(d.ID, d.Text), graph.Heuristic{}))
	}
	g := mustBuild(t, shards...)
	lookup := func(_ context.Context, ids []string) (map[string]string, error) {
		out := map[string]string{}
		for _, id := range ids {
			if s, ok := texts[id]; ok {
				out[id] = s
			}
		}
		return out, nil
	}
	return g, g.Communities(1), lookup
}

func TestReportsSummariseEachCommunityFromItsCentralChunks(t *testing.T) {
	g, comms, texts := world(t)
	reports, err := g.Reports(context.Background(), comms, texts, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(reports) == 0 {
		t.Fatal("no reports")
	}
	levels := map[int]bool{}
	for _, r := range reports {
		levels[r.Level] = true
		if r.Summary == "" || r.By != "extractive" || len(r.Entities) == 0 || len(r.Chunks) == 0 {
			t.Errorf("report %d/%d is incomplete: %+v", r.Level, r.Community, r)
		}
		if !strings.Contains(r.Summary, r.Entities[0]) {
			t.Errorf("report %d/%d's summary %q does not name its central entity %q", r.Level, r.Community, r.Summary, r.Entities[0])
		}
	}
	if len(levels) != len(comms.Levels) {
		t.Errorf("reports at %d levels of %d", len(levels), len(comms.Levels))
	}
	b, err := graph.MarshalReports(reports)
	if err != nil {
		t.Fatal(err)
	}
	back, err := graph.DecodeReports(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(reports, back); diff != "" {
		t.Errorf("decoded reports mismatch (-want +got):\n%s", diff)
	}
}

func TestReportsUseTheGeneratorAndFallBackWhenItFails(t *testing.T) {
	g, comms, texts := world(t)
	var n atomic.Int64
	gen := scripted{func(req provider.GenerateRequest) (string, error) {
		if n.Add(1)%2 == 0 {
			return "", errors.New("throttled")
		}
		return "A report on " + req.Question, nil
	}}
	reports, err := g.Reports(context.Background(), comms, texts, gen, "")
	if err != nil {
		t.Fatal(err)
	}
	var by []string
	for _, r := range reports {
		if !slices.Contains(by, r.By) {
			by = append(by, r.By)
		}
	}
	slices.Sort(by)
	if diff := cmp.Diff([]string{"extractive", "test/scripted"}, by); diff != "" {
		t.Errorf("report writers mismatch (-want +got):\n%s", diff)
	}
}

func TestReportsAskTheGeneratorForAtMostTheirBoundCoarsestLevelsFirst(t *testing.T) {
	c := multihop.Generate(3, multihop.Options{People: 400, Companies: 40, Cities: 12, Questions: 1})
	texts := map[string]string{}
	var shards []*graph.Shard
	for _, d := range c.Docs {
		texts[d.ID+"#0"] = d.Text
		shards = append(shards, mustShard(t, doc(d.ID, d.Text), graph.Heuristic{}))
	}
	g := mustBuild(t, shards...)
	lookup := func(_ context.Context, ids []string) (map[string]string, error) {
		out := map[string]string{}
		for _, id := range ids {
			out[id] = texts[id]
		}
		return out, nil
	}
	var calls atomic.Int64
	gen := scripted{func(provider.GenerateRequest) (string, error) {
		calls.Add(1)
		return "Generated.", nil
	}}
	reports, err := g.Reports(context.Background(), g.Communities(1), lookup, gen, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(reports) <= graph.MaxGeneratedReports {
		t.Fatalf("%d reports: the world is too small to pass the bound", len(reports))
	}
	if calls.Load() != graph.MaxGeneratedReports {
		t.Errorf("%d generations, want %d", calls.Load(), graph.MaxGeneratedReports)
	}
	top := reports[len(reports)-1].Level
	for _, r := range reports {
		if r.Level == top && r.By != "test/scripted" {
			t.Errorf("report %d/%d of the coarsest level is %s, want generated", r.Level, r.Community, r.By)
		}
	}
}

func TestDecodeReportsRefusesReportsPastTheirBounds(t *testing.T) {
	tests := []struct{ name, data, field string }{
		{"not JSON", "{", "decode reports"},
		{"too many entities", `[{"entities":["a","b","c","d","e","f","g","h","i","j","k"]}]`, "reports[0].entities"},
		{"a summary too long", `[{"summary":"` + strings.Repeat("x", graph.MaxReportChars+1) + `"}]`, "reports[0].summary"},
		{"a negative level", `[{"level":-1}]`, "reports[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := graph.DecodeReports([]byte(tt.data)); err == nil || !strings.Contains(err.Error(), tt.field) {
				t.Errorf("error %v, want one naming %q", err, tt.field)
			}
		})
	}
}

func TestGlobalAnswersFromTheReportsThatCoverTheQuestion(t *testing.T) {
	g, comms, texts := world(t)
	reports, err := g.Reports(context.Background(), comms, texts, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	// Ask about the central entity of the largest report of level 0.
	var target graph.Report
	for _, r := range reports {
		if r.Level == 0 && r.Size > target.Size {
			target = r
		}
	}
	q := fmt.Sprintf("What do we know about %s?", target.Entities[0])
	res, err := graph.Global(context.Background(), q, reports, graph.GlobalOptions{Level: 0})
	if err != nil {
		t.Fatal(err)
	}
	if res.Level != 0 || !slices.Contains(res.Used, target.Community) {
		t.Errorf("level %d, used %v: want level 0 and community %d", res.Level, res.Used, target.Community)
	}
	if !strings.Contains(res.Answer, target.Entities[0]) || !strings.Contains(res.Answer, fmt.Sprintf("[community 0/%d]", target.Community)) {
		t.Errorf("answer %q does not cite what it uses", res.Answer)
	}
	if len(res.Sources) == 0 || !slices.Contains(res.Sources, target.Docs[0]) {
		t.Errorf("sources %v lack %v", res.Sources, target.Docs)
	}
}

func TestGlobalMapsWithTheGeneratorAndCountsRefusedReplies(t *testing.T) {
	reports := []graph.Report{
		{Level: 0, Community: 0, Title: "A", Summary: "Alpha.", Docs: []string{"da"}},
		{Level: 0, Community: 1, Title: "B", Summary: "Beta.", Docs: []string{"db"}},
	}
	gen := scripted{func(req provider.GenerateRequest) (string, error) {
		switch {
		case req.System == graph.MapPrompt && strings.HasPrefix(req.Documents[0], "A"):
			return `{"points":[{"description":"Alpha matters.","score":80}]}`, nil
		case req.System == graph.MapPrompt:
			return `{"points":[{"description":"Beta.","score":300}]}`, nil
		}
		return "Reduced: " + strings.Join(req.Sources, ", "), nil
	}}
	res, err := graph.Global(context.Background(), "Why?", reports, graph.GlobalOptions{Level: -1, Generator: gen})
	if err != nil {
		t.Fatal(err)
	}
	want := graph.GlobalResult{
		Answer: "Reduced: community 0/0", Sources: []string{"da"}, Level: 0, Mapped: []int{0, 1}, Used: []int{0},
		Points: []graph.Point{{Text: "Alpha matters.", Score: 80}}, MapFailures: 1,
	}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("result mismatch (-want +got):\n%s", diff)
	}
}

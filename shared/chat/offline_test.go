package chat

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/callcontext"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/memory"
	"github.com/switchboard-dev/switchboard/shared/pipeline"
	"github.com/switchboard-dev/switchboard/shared/profile"
	"github.com/switchboard-dev/switchboard/shared/prompt"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

func TestWebSearchTriggers(t *testing.T) {
	for _, tc := range []struct {
		message string
		want    bool
	}{
		{"What is the latest Go release?", true},
		{"Any news about the election today", true},
		{"Please search the web for PGA tuning", true},
		{"Tin tức mới nhất về Go", true},
		{"How often should I replace my toothbrush?", false},
		{"What does the currency field hold?", false}, // "current" inside a word is no trigger
		{"Hello, my name is Mike.", false},
	} {
		if got := wantsWebSearch(tc.message); got != tc.want {
			t.Errorf("wantsWebSearch(%q) = %v, want %v", tc.message, got, tc.want)
		}
	}
}

// searchTools offers one web search tool answering in seed 004's text format.
type searchTools struct{ calls []string }

func (s *searchTools) List(context.Context, tenant.Caller) ([]Tool, error) {
	return []Tool{{Group: ToolsWebSearch, ToolSpec: provider.ToolSpec{Name: "duckduckgo_search", Description: "Search the web.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`)}}}, nil
}

func (s *searchTools) Call(_ context.Context, _ tenant.Caller, name string, args json.RawMessage) (ToolResult, error) {
	s.calls = append(s.calls, name+" "+string(args))
	return ToolResult{Text: "Title: Go 1.26 released\nContent: Go 1.26 is out.\nLink: https://go.dev/blog/go1.26\n---"}, nil
}

func TestAnOfflineTurnWithTriggerWordsSearchesTheWeb(t *testing.T) {
	tools := &searchTools{}
	svc := New(Options{Memory: memory.New(storetest.OpenEmbedded(t), nil), Generator: offline.NewGenerator(), Tools: tools})
	out, err := svc.Chat(context.Background(), tenant.Caller{Tenant: "acme", Principal: "alice"}, Input{ThreadID: "web", Message: "What is the latest Go release?"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{`duckduckgo_search {"query":"What is the latest Go release?"}`}, tools.calls); diff != "" {
		t.Errorf("tool calls mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{RouteTools, RouteAnswer}, out.Route); diff != "" {
		t.Errorf("route mismatch (-want +got):\n%s", diff)
	}
	if !out.Offline || out.Answer != "No language model is configured, so this answer is assembled without one: here is what duckduckgo_search returned.\n\nTitle: Go 1.26 released\nContent: Go 1.26 is out.\nLink: https://go.dev/blog/go1.26\n---" {
		t.Errorf("answer %q", out.Answer)
	}
}

// threadSettings gives one thread's settings; other threads get the defaults.
type threadSettings map[string]Settings

func (s threadSettings) Get(_ context.Context, _, thread string) (Settings, error) {
	return s[thread], nil
}

// overrides gives the prompts a tenant overrode; others are not found.
type overrides map[string]string

func (o overrides) Text(_ context.Context, _, name string) (string, error) {
	if t, ok := o[name]; ok {
		return t, nil
	}
	return "", &fault.Error{Kind: fault.KindNotFound, Message: name + " is not overridden"}
}

// mustPrompt returns the default text of the prompt named name.
func mustPrompt(t *testing.T, name string) string {
	t.Helper()
	text, err := prompt.Defaults.Text(context.Background(), "", name)
	if err != nil {
		t.Fatal(err)
	}
	return text
}

func TestSettingsAndPromptsShapeATurn(t *testing.T) {
	ctx := context.Background()
	alice := tenant.Caller{Tenant: "acme", Principal: "alice"}
	settings := threadSettings{"no-vs": {ToolsEnabled: []string{ToolsWebSearch}}, "pirate": {System: "pirate"}}
	var systems []string
	svc := New(Options{Memory: memory.New(storetest.OpenEmbedded(t), nil), Settings: settings, Prompts: overrides{"pirate": "You are a pirate."},
		Generator: recordingModel{systems: &systems}, Pipeline: failingPipeline{}})

	t.Run("AThreadWithoutVectorSearchNeverSearches", func(t *testing.T) {
		out, err := svc.Chat(ctx, alice, Input{ThreadID: "no-vs", Message: "hello"})
		if err != nil || out.VSMetadata != nil || len(systems) != 1 || systems[0] != mustPrompt(t, PromptBasic) {
			t.Errorf("Chat = %+v, %v; system prompts %q: want no search and the basic prompt", out, err, systems)
		}
	})
	t.Run("AThreadsPromptChoiceIsReadWithItsOverride", func(t *testing.T) {
		systems = nil
		if _, err := svc.Chat(ctx, alice, Input{ThreadID: "pirate", Message: "hello"}); err != nil {
			t.Fatal(err)
		}
		if len(systems) != 1 || systems[0] != "You are a pirate." {
			t.Errorf("system prompts %q, want the override", systems)
		}
	})
}

// recordingModel answers at once and records the system prompts it got.
type recordingModel struct{ systems *[]string }

func (recordingModel) Generate(context.Context, provider.GenerateRequest) (provider.Generation, error) {
	return provider.Generation{}, nil
}

func (m recordingModel) Chat(_ context.Context, req provider.ChatRequest) (provider.ChatReply, error) {
	*m.systems = append(*m.systems, req.System)
	return provider.ChatReply{Text: "ok", StopReason: provider.StopEnd}, nil
}

// failingPipeline fails any run: a turn that searches would say so.
type failingPipeline struct{}

func (failingPipeline) Run(context.Context, pipeline.Input) (pipeline.Output, error) {
	return pipeline.Output{}, errors.New("the pipeline ran")
}

// ungradedPipeline finds one document and grades it not relevant.
type ungradedPipeline struct{}

func (ungradedPipeline) Run(_ context.Context, in pipeline.Input) (pipeline.Output, error) {
	return pipeline.Output{Question: in.Question, ContextInput: in.Question, Relevant: "no", Graded: true, SearchedStores: []string{"guides"},
		Documents: []pipeline.Document{{DocID: "guide", Content: "Rotate keys every ninety days.", Store: "guides"}}}, nil
}

func TestAThreadWithGradingOffKeepsTheDocumentsTheGradeStepRejected(t *testing.T) {
	alice := tenant.Caller{Tenant: "acme", Principal: "alice"}
	svc := New(Options{Memory: memory.New(storetest.OpenEmbedded(t), nil), Generator: offline.NewGenerator(), Pipeline: ungradedPipeline{},
		Settings: threadSettings{"ungraded": {Ungraded: true}}})
	for _, c := range []struct {
		thread string
		want   int
	}{{"graded", 0}, {"ungraded", 1}} {
		out, err := svc.Chat(context.Background(), alice, Input{ThreadID: c.thread, Message: "how often do I rotate keys?"})
		if err != nil || out.VSMetadata == nil || out.VSMetadata.NumDocuments != c.want {
			t.Errorf("thread %s: Chat = %+v, %v; want %d documents", c.thread, out, err, c.want)
		}
	}
}

// scriptedModel calls the tools of calls in its first completion, then
// answers, recording the tools each completion offered.
type scriptedModel struct {
	calls   []provider.ToolCall
	offered [][]string
}

func (*scriptedModel) Generate(context.Context, provider.GenerateRequest) (provider.Generation, error) {
	return provider.Generation{}, nil
}

func (m *scriptedModel) Chat(_ context.Context, req provider.ChatRequest) (provider.ChatReply, error) {
	var names []string
	for _, t := range req.Tools {
		names = append(names, t.Name)
	}
	m.offered = append(m.offered, names)
	if len(m.offered) == 1 {
		return provider.ChatReply{ToolCalls: m.calls, StopReason: provider.StopToolUse}, nil
	}
	return provider.ChatReply{Text: "done", StopReason: provider.StopEnd}, nil
}

// groupTools offers a tool of each group and records the calls.
type groupTools struct{ called []string }

func (g *groupTools) List(context.Context, tenant.Caller) ([]Tool, error) {
	spec := func(name string) provider.ToolSpec {
		return provider.ToolSpec{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}
	}
	return []Tool{{Group: ToolsWebSearch, ToolSpec: spec("web_search")}, {Group: ToolsConnectors, ToolSpec: spec("github__search")},
		{Group: ToolsSwitchboard, ToolSpec: spec("memory_list_conversations")}}, nil
}

func (g *groupTools) Call(_ context.Context, _ tenant.Caller, name string, _ json.RawMessage) (ToolResult, error) {
	g.called = append(g.called, name)
	return ToolResult{Text: "ran"}, nil
}

func TestTheCallersProfileHoldsTheChatsTools(t *testing.T) {
	every := []provider.ToolCall{{ID: "1", Name: "web_search", Arguments: json.RawMessage(`{}`)}, {ID: "2", Name: "github__search", Arguments: json.RawMessage(`{}`)},
		{ID: "3", Name: "memory_list_conversations", Arguments: json.RawMessage(`{}`)}}
	for _, c := range []struct {
		name    string
		held    profile.Profile
		offered []string
	}{
		{"TheZeroProfileAllowsEveryTool", profile.Profile{}, []string{VectorSearchTool, "web_search", "github__search", "memory_list_conversations"}},
		{"ADeniedPatternIsNeitherOfferedNorCalled", profile.Profile{Deny: []string{"github__*", "memory_*"}}, []string{VectorSearchTool, "web_search"}},
		{"AnAllowListKeepsOnlyItsNames", profile.Profile{Allow: []string{"memory_list_conversations"}}, []string{"memory_list_conversations"}},
		{"GroupsTheProfileLeavesOutAreOff", profile.Profile{Groups: []string{ToolsConnectors}}, []string{"github__search", "memory_list_conversations"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tools, model := &groupTools{}, &scriptedModel{calls: every}
			svc := New(Options{Memory: memory.New(storetest.OpenEmbedded(t), nil), Generator: model, Tools: tools, Pipeline: ungradedPipeline{}})
			ctx := callcontext.NewContext(context.Background(), callcontext.Call{Profile: c.held})
			out, err := svc.Chat(ctx, tenant.Caller{Tenant: "acme", Principal: "alice"}, Input{Message: "go"})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.offered, model.offered[0]); diff != "" {
				t.Errorf("tools offered mismatch (-want +got):\n%s", diff)
			}
			var called []string
			for _, name := range c.offered {
				if name != VectorSearchTool {
					called = append(called, name)
				}
			}
			if diff := cmp.Diff(called, tools.called); diff != "" {
				t.Errorf("tools called mismatch (-want +got):\n%s", diff)
			}
			for _, rec := range out.ToolCalls {
				if rec.IsError == slices.Contains(called, rec.Name) {
					t.Errorf("the call of %s is an error: %v", rec.Name, rec.IsError)
				}
			}
		})
	}
}

func TestAnAnswerIsStreamedInWholeWordsWithinTheBound(t *testing.T) {
	for _, c := range []struct {
		name, answer string
		pieces       int
	}{
		{"AShortAnswerGoesWordByWord", "Replace it\nevery  three months.", 5},
		{"ALongAnswerGoesInAtMostMaxDeltasPieces", strings.Repeat("word ", 5000), MaxDeltas},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got strings.Builder
			n, last := 0, 0.0
			svc := New(Options{Deltas: func(_ context.Context, done, total float64, delta string) {
				n++
				got.WriteString(delta)
				if done <= last || total != float64(len(c.answer)) || done != float64(got.Len()) {
					t.Errorf("piece %d: done %v of %v after %v", n, done, total, last)
				}
				last = done
			}})
			svc.deltas(context.Background()).whole(c.answer)
			if got.String() != c.answer || n > c.pieces || n < 2 {
				t.Errorf("%d pieces joined to %q, want at most %d joined to the answer", n, got.String(), c.pieces)
			}
		})
	}
}

func TestAModelsTextIsStreamedAsWrittenWithinTheBound(t *testing.T) {
	for _, c := range []struct {
		name   string
		writes int
		piece  string
	}{
		{"AShortAnswerGoesDeltaByDelta", 40, "word "},
		{"ALongAnswerGoesInAtMostMaxDeltasPieces", 200_000, "ab "},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got strings.Builder
			n, last := 0, 0.0
			svc := New(Options{Deltas: func(_ context.Context, done, _ float64, delta string) {
				n++
				got.WriteString(delta)
				if done <= last || done != float64(got.Len()) {
					t.Errorf("piece %d: done %v after %v", n, done, last)
				}
				last = done
			}})
			d := svc.deltas(context.Background())
			for i := range c.writes {
				d.write(c.piece)
				if i < MaxDeltas/4 && n != i+1 {
					t.Fatalf("after %d writes %d pieces went out, want each write sent as it came", i+1, n)
				}
			}
			const failure = "Sorry, I could not finish this answer: the stream broke."
			d.gap = true
			d.whole(failure)
			want := strings.Repeat(c.piece, c.writes) + "\n\n" + failure
			if got.String() != want || n > MaxDeltas {
				t.Errorf("%d pieces joined to %d bytes, want at most %d joined to the %d bytes written and the failure", n, got.Len(), MaxDeltas, len(want))
			}
		})
	}
}

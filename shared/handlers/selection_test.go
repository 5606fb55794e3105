package handlers_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/provider/openai"
	"github.com/switchboard-dev/switchboard/shared/vector"
)

// openAIModel is an OpenAI-compatible model (POST /v1/chat/completions)
// that answers each request with reply(its last user message) and records
// those messages. A reply of "" is an HTTP 500.
type openAIModel struct {
	mu    sync.Mutex
	asked []string
	reply func(message string) string
}

func (m *openAIModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&req) != nil {
		http.Error(w, `{"error":{"message":"bad request","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	var msg string
	for _, m := range req.Messages {
		if m.Role == "user" {
			msg = m.Content
		}
	}
	m.mu.Lock()
	m.asked = append(m.asked, msg)
	reply := m.reply
	m.mu.Unlock()
	text := ""
	if reply != nil { // asked before the test set a reply (a graph extraction): overloaded
		text = reply(msg)
	}
	if text == "" {
		http.Error(w, `{"error":{"message":"the model is overloaded","type":"server_error"}}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"model": req.Model,
		"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": text}, "finish_reason": "stop"}},
		"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}})
}

// answer sets how the model replies from now on.
func (m *openAIModel) answer(reply func(message string) string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reply = reply
}

// selections returns the table-selection requests the model was sent.
func (m *openAIModel) selections(marker string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, a := range m.asked {
		if strings.Contains(a, marker) {
			out = append(out, a)
		}
	}
	return out
}

// storesOf is a stack generating with an OpenAI-compatible model at a
// local stand-in, holding three stores with a document each.
func storesOf(t *testing.T) (invoke.Invoker, *openAIModel) {
	t.Helper()
	model := &openAIModel{}
	srv := httptest.NewServer(model)
	t.Cleanup(srv.Close)
	client, err := openai.NewClient(srv.URL+"/v1/", "", &openai.ClientOptions{MaxBackoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	gen, err := openai.NewGenerator(client, "gpt-4o-mini")
	if err != nil {
		t.Fatal(err)
	}
	inv := stackGenerating(t, gen, nil)
	for _, st := range []struct{ alias, description, content string }{
		{"dental", "toothbrushes and dental care", "Replace your toothbrush every three months."},
		{"cooking", "recipes and kitchen tips", "Knead the dough for ten minutes."},
		{"travel", "", "Pack light for long flights."},
	} {
		mustCall(t, inv, alice, "vector_store_create", map[string]any{"alias": st.alias, "description": st.description})
		mustCall(t, inv, alice, "vector_document_ingest", map[string]any{"store": st.alias, "doc_id": st.alias + "-1", "content": st.content})
	}
	return inv, model
}

const toothbrush = "How often should I replace my toothbrush?"

func TestAModelChoosesTheStoresASearchNamesNoneOf(t *testing.T) {
	inv, model := storesOf(t)
	const marker = "Choose the vector stores to search" // the default prompt's first words
	retrieve := func(args map[string]any) vector.RetrieveOutput {
		t.Helper()
		args["question"] = toothbrush
		var out vector.RetrieveOutput
		if err := json.Unmarshal(mustCall(t, inv, alice, "optimizer_vs-retriever", args), &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		reply    string // "" fails the request
		args     map[string]any
		searched []string
		by       string
		fallback string // a part of the reason, when the score chose
		asked    bool
		ignored  []string
	}{
		{"the model's choice is searched, even against the score", `["cooking"]`, map[string]any{}, []string{"cooking"}, vector.SelectedByModel, "", true, nil},
		{"names that are no candidate store are ignored", "```json\n[\"recipes\", \"travel\"]\n```", map[string]any{}, []string{"travel"}, vector.SelectedByModel, "", true, []string{"recipes"}},
		{"a reply naming no store leaves the choice to the score", "I cannot tell which.", map[string]any{}, []string{"dental"}, vector.SelectedByScore, "names no store", true, []string{"i cannot tell which"}},
		{"an empty choice leaves it to the score", `[]`, map[string]any{}, []string{"dental"}, vector.SelectedByScore, "chose no store", true, nil},
		{"a failing model leaves it to the score", "", map[string]any{}, []string{"dental"}, vector.SelectedByScore, "the model failed", true, nil},
		{"stores named are searched without asking the model", `["cooking"]`, map[string]any{"stores": []string{"travel"}}, []string{"travel"}, "", "", false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			model.answer(func(string) string { return tc.reply })
			before := len(model.selections(marker))
			out := retrieve(tc.args)
			asked := model.selections(marker)
			if got := len(asked) - before; (got > 0) != tc.asked { // a failing model is asked again by the client's retries
				t.Fatalf("the model was asked %d times, want it asked: %v", got, tc.asked)
			}
			if !slices.Equal(out.SearchedStores, tc.searched) {
				t.Errorf("searched %v, want %v", out.SearchedStores, tc.searched)
			}
			sel := out.Selection
			if tc.by == "" {
				if sel != nil {
					t.Errorf("store_selection %+v for stores named, want none", sel)
				}
				return
			}
			if sel == nil || sel.By != tc.by || !strings.Contains(sel.Fallback, tc.fallback) || (tc.fallback == "") != (sel.Fallback == "") ||
				!slices.Equal(sel.Ignored, tc.ignored) {
				t.Errorf("store_selection %+v, want by %s, a fallback saying %q, ignored %v", sel, tc.by, tc.fallback, tc.ignored)
			}
			if tc.by == vector.SelectedByModel && (sel.Provider != "openai" || !strings.HasPrefix(sel.Model, "gpt-4o-mini")) {
				t.Errorf("store_selection %+v, want the model that chose named", sel)
			}
			msg := asked[len(asked)-1]
			for _, want := range []string{"dental: toothbrushes and dental care", "cooking: recipes and kitchen tips", "travel: (no description)", "Question: " + toothbrush, "at most 3"} {
				if !strings.Contains(msg, want) {
					t.Errorf("the model was asked %q, which lacks %q", msg, want)
				}
			}
		})
	}
}

func TestATenantsTableSelectionOverrideReachesTheModelOnTheNextSearch(t *testing.T) {
	inv, model := storesOf(t)
	model.answer(func(string) string { return `["travel"]` })
	const override = "PICK STORES for {question} among:\n{stores}\nReply with a JSON array."
	mustCall(t, inv, alice, "prompt_override_set", map[string]any{"name": "optimizer_vs-table-selection", "text": override})
	var out vector.RetrieveOutput
	if err := json.Unmarshal(mustCall(t, inv, alice, "optimizer_vs-retriever", map[string]any{"question": toothbrush}), &out); err != nil {
		t.Fatal(err)
	}
	asked := model.selections("PICK STORES")
	want := "PICK STORES for " + toothbrush + " among:\ndental: toothbrushes and dental care\ncooking: recipes and kitchen tips\ntravel: (no description)\nReply with a JSON array."
	if len(asked) != 1 || asked[0] != want {
		t.Fatalf("the model was asked %q, want once %q", asked, want)
	}
	if !slices.Equal(out.SearchedStores, []string{"travel"}) || out.Selection == nil || out.Selection.By != vector.SelectedByModel {
		t.Errorf("searched %v by %+v, want travel chosen by the model", out.SearchedStores, out.Selection)
	}
	// Another tenant's searches still use the default.
	mustCall(t, inv, bob, "vector_store_create", map[string]any{"alias": "a"})
	mustCall(t, inv, bob, "vector_document_ingest", map[string]any{"store": "a", "doc_id": "1", "content": "Toothbrush facts."})
	mustCall(t, inv, bob, "vector_store_create", map[string]any{"alias": "b"})
	mustCall(t, inv, bob, "vector_document_ingest", map[string]any{"store": "b", "doc_id": "1", "content": "Kitchen facts."})
	mustCall(t, inv, bob, "optimizer_vs-retriever", map[string]any{"question": toothbrush})
	if n := len(model.selections("PICK STORES")); n != 1 || len(model.selections("Choose the vector stores to search")) != 1 {
		t.Errorf("after another tenant's search, the override was sent %d times and the default %d, want 1 and 1", n, len(model.selections("Choose the vector stores to search")))
	}
}

// Through the pipeline, the rag_* tools' metadata says how the stores
// were chosen; offline, the score chose.
func TestThePipelineReportsHowItsStoresWereChosen(t *testing.T) {
	inv, model := storesOf(t)
	model.answer(func(msg string) string {
		switch {
		case strings.Contains(msg, "Choose the vector stores to search"):
			return `["cooking", "dental"]`
		case strings.Contains(msg, "Answer yes or no"):
			return "yes"
		}
		return "Every three months."
	})
	r := decodeRAG(t, mustCall(t, inv, alice, "rag_basic", map[string]any{"query": toothbrush}))
	if sel := r.Metadata.StoreSelection; sel == nil || sel.By != vector.SelectedByModel || !slices.Equal(r.Metadata.SearchedStores, []string{"cooking", "dental"}) {
		t.Errorf("metadata searched %v, store_selection %+v; want cooking and dental chosen by the model", r.Metadata.SearchedStores, sel)
	}

	offlineInv := stack(t, nil)
	for _, alias := range []string{"dental", "cooking"} {
		mustCall(t, offlineInv, alice, "vector_store_create", map[string]any{"alias": alias})
		mustCall(t, offlineInv, alice, "vector_document_ingest", map[string]any{"store": alias, "doc_id": "1", "content": "Replace your toothbrush in " + alias + "."})
	}
	r = decodeRAG(t, mustCall(t, offlineInv, alice, "rag_basic", map[string]any{"query": toothbrush}))
	if sel := r.Metadata.StoreSelection; sel == nil || sel.By != vector.SelectedByScore || sel.Fallback != "" || sel.Provider != "" {
		t.Errorf("offline store_selection %+v, want by score, with no model asked", sel)
	}
}

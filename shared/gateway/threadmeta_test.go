package gateway_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/gateway"
)

// An optimizer_* tool reads the settings of the thread a call names in
// _meta when its arguments name none (issue 14): the gateway hands the
// thread to the function.
func TestARetrievalReadsTheSettingsOfTheThreadItsMetaNames(t *testing.T) {
	h := newHarness(t, nil)
	cs := h.connect(t, "", nil)
	for _, store := range []string{"gardens", "kitchens"} {
		mustCall(t, cs, "vector_store_create", map[string]any{"alias": store, "description": "guides to " + store})
		for _, doc := range []string{"a", "b", "c"} {
			mustCall(t, cs, "vector_document_ingest", map[string]any{"store": store, "doc_id": store + "-" + doc, "format": "md",
				"content": "# Cleaning " + store + " " + doc + "\n\nHow to clean " + store + " with soap and water, guide " + doc + "."})
		}
	}
	mustCall(t, cs, "settings_update", map[string]any{"thread_id": "chat_kitchens", "vector_search": map[string]any{"stores": []string{"kitchens"}, "top_k": 2, "mode": "bm25"}})
	mustCall(t, cs, "settings_update", map[string]any{"thread_id": "chat_gardens", "vector_search": map[string]any{"stores": []string{"gardens"}, "top_k": 1, "mode": "bm25"}})

	retrieve := func(t *testing.T, args map[string]any, meta mcp.Meta) (*mcp.CallToolResult, error) {
		t.Helper()
		return cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "optimizer_vs-retriever", Arguments: args, Meta: meta})
	}
	for _, tc := range []struct {
		name       string
		args       map[string]any
		meta       mcp.Meta
		wantStores []string
		wantCount  int
	}{
		{"a thread named in _meta gives the stores and top_k", map[string]any{"question": "how to clean with soap"}, threadMeta("chat_kitchens"), []string{"kitchens"}, 2},
		{"the thread_id argument wins over _meta", map[string]any{"question": "how to clean with soap", "thread_id": "chat_gardens"}, threadMeta("chat_kitchens"), []string{"gardens"}, 1},
		{"the call's own stores win over the thread's", map[string]any{"question": "how to clean with soap", "stores": []string{"gardens"}}, threadMeta("chat_kitchens"), []string{"gardens"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := retrieve(t, tc.args, tc.meta)
			if err != nil || res.IsError {
				t.Fatalf("optimizer_vs-retriever: %v %v", err, res)
			}
			var out struct {
				Documents []struct {
					Store string `json:"store"`
				} `json:"documents"`
			}
			remarshal(t, res.StructuredContent, &out)
			var stores []string
			for _, d := range out.Documents {
				if !slices.Contains(stores, d.Store) {
					stores = append(stores, d.Store)
				}
			}
			if len(out.Documents) != tc.wantCount || !slices.Equal(stores, tc.wantStores) {
				got, _ := json.Marshal(res.StructuredContent)
				t.Errorf("retrieved %d documents from %v, want %d from %v: %s", len(out.Documents), stores, tc.wantCount, tc.wantStores, got)
			}
		})
	}

	for _, tc := range []struct {
		name   string
		thread any
	}{
		{"a thread id with a space", "chat kitchens"},
		{"a thread id too long", strings.Repeat("t", 129)},
		{"a thread id of control characters", "\x00\x01"},
		{"an empty thread id", ""},
		{"a thread id that is not a string", 7},
	} {
		t.Run("refuses "+tc.name, func(t *testing.T) {
			_, err := retrieve(t, map[string]any{"question": "soap"}, mcp.Meta{gateway.ThreadMetaKey: tc.thread})
			if err == nil || !strings.Contains(err.Error(), `_meta["switchboard.dev/thread_id"]`) {
				t.Errorf("optimizer_vs-retriever with _meta thread %q: %v, want an error naming the key", tc.thread, err)
			}
		})
	}
}

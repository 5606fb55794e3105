package handlers_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/settings"
	"github.com/switchboard-dev/switchboard/shared/tenant"
	"github.com/switchboard-dev/switchboard/shared/vector"
)

func TestTheRetrieverReadsItsThreadsSettings(t *testing.T) {
	inv := stack(t, nil)
	mustCall(t, inv, alice, "vector_store_create", map[string]any{"alias": "docs"})
	mustCall(t, inv, alice, "vector_store_create", map[string]any{"alias": "other"})
	for i := range 4 {
		mustCall(t, inv, alice, "vector_document_ingest", map[string]any{"store": "docs", "doc_id": fmt.Sprint("d", i),
			"content": fmt.Sprintf("Key rotation, part %d: rotate the API keys every %d days.", i, 30+i)})
		mustCall(t, inv, alice, "vector_document_ingest", map[string]any{"store": "other", "doc_id": fmt.Sprint("o", i),
			"content": fmt.Sprintf("Key rotation elsewhere, note %d: API keys are rotated by hand.", i)})
	}
	mustCall(t, inv, alice, "settings_update", map[string]any{"thread_id": "chat_1",
		"vector_search": map[string]any{"stores": []string{"docs"}, "top_k": 2, "mode": "bm25"}})
	mustCall(t, inv, alice, "settings_update", map[string]any{"vector_search": map[string]any{"top_k": 3}}) // alice's default thread
	bob := tenant.Caller{Tenant: alice.Tenant, Principal: "bob"}
	retrieve := func(c tenant.Caller, args map[string]any) vector.RetrieveOutput {
		t.Helper()
		args["question"] = "How often are the API keys rotated?"
		var out vector.RetrieveOutput
		if err := json.Unmarshal(mustCall(t, inv, c, "optimizer_vs-retriever", args), &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, tc := range []struct {
		name       string
		caller     tenant.Caller
		args       map[string]any
		wantDocs   int
		wantMode   string
		wantStores []string
	}{
		{"the thread's stores, top_k and mode apply", alice, map[string]any{"thread_id": "chat_1"}, 2, "bm25", []string{"docs"}},
		{"the call's own values win", alice, map[string]any{"thread_id": "chat_1", "top_k": 1, "mode": "hybrid", "stores": []string{"other"}}, 1, "hybrid", []string{"other"}},
		{"without thread_id, the principal's default thread", alice, map[string]any{}, 3, "hybrid", nil},
		{"another principal's default thread has the defaults", bob, map[string]any{}, settings.DefaultTopK, "hybrid", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := retrieve(tc.caller, tc.args)
			if len(out.Documents) != tc.wantDocs || out.Mode != tc.wantMode {
				t.Errorf("%d documents in mode %s, want %d in %s", len(out.Documents), out.Mode, tc.wantDocs, tc.wantMode)
			}
			if tc.wantStores != nil && fmt.Sprint(out.SearchedStores) != fmt.Sprint(tc.wantStores) {
				t.Errorf("searched %v, want %v", out.SearchedStores, tc.wantStores)
			}
		})
	}
	if _, ferr := call(t, inv, alice, "optimizer_vs-retriever", map[string]any{"question": "q", "thread_id": "no/such thread"}); ferr == nil {
		t.Error("a malformed thread_id was accepted")
	}
}

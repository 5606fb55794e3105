package settings_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/settings"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

func caller(principal string) tenant.Caller {
	var b [6]byte
	rand.Read(b[:])
	return tenant.Caller{Tenant: "t-" + hex.EncodeToString(b[:]), Principal: principal}
}

func ptr[T any](v T) *T { return &v }

var clock = time.Date(2026, 11, 26, 6, 0, 0, 0, time.UTC)

func newStore(tbl store.Table) *settings.Store {
	return settings.New(tbl, &settings.Options{
		Now: func() time.Time { return clock },
		AllowModel: func(m string) error {
			if m != "gpt-4o-mini" {
				return fault.Invalid("llm_model", "%q is not allowed; allowed: gpt-4o-mini", m)
			}
			return nil
		},
	})
}

// fieldOf returns the field an invalid-argument error names, or "".
func fieldOf(err error) string {
	if fault.KindOf(err) != fault.KindInvalid {
		return ""
	}
	_, field, _ := fault.Public(err)
	return field
}

func TestGetReturnsTheContractedShape(t *testing.T) {
	b, err := json.Marshal(settings.Defaults("chat_1"))
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"thread_id":"chat_1","tools_enabled":["Vector Search","Connectors","Web Search"],` +
		`"vector_search":{"stores":[],"mode":"hybrid","top_k":5,"rephrase":true,"grade":true},` +
		`"model":{"generator":"","temperature":0.2,"max_tokens":1024},"prompts":{"system":"optimizer_basic-default"},` +
		`"version":0,"updated_at":""}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}

func TestThreadComesFromTheArgumentThenMetaThenThePrincipal(t *testing.T) {
	c := tenant.Caller{Tenant: "acme", Principal: "alice"}
	for _, tc := range []struct {
		name      string
		arg       string
		meta      map[string]any
		want      string
		wantField string
	}{
		{"the argument wins", "chat_1", map[string]any{settings.MetaThreadID: "chat_2"}, "chat_1", ""},
		{"then _meta", "", map[string]any{settings.MetaThreadID: "chat_2"}, "chat_2", ""},
		{"then the principal's default thread", "", nil, settings.DefaultThread("alice"), ""},
		{"a malformed argument is refused", "../x", nil, "", "thread_id"},
		{"a _meta thread that is not a string is refused", "", map[string]any{settings.MetaThreadID: 7.0}, "", "_meta." + settings.MetaThreadID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := settings.Thread(c, tc.arg, tc.meta)
			if tc.wantField != "" {
				if fieldOf(err) != tc.wantField {
					t.Errorf("got %v, want an error naming %s", err, tc.wantField)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	if settings.DefaultThread("alice") == settings.DefaultThread("bob") {
		t.Error("two principals share a default thread")
	}
}

func TestSettings(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		ctx := context.Background()
		s := newStore(tbl)

		t.Run("a thread never configured has the defaults", func(t *testing.T) {
			c := caller("alice")
			got, err := s.Current(ctx, c, settings.GetInput{ThreadID: "chat_1"})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(settings.Defaults("chat_1"), got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})

		t.Run("an update changes only the options given", func(t *testing.T) {
			c := caller("alice")
			got, err := s.Update(ctx, c, settings.UpdateInput{ThreadID: "chat_1",
				ToolsEnabled: ptr([]string{"Web Search", "Vector Search"}),
				VectorSearch: &settings.VectorSearchUpdate{Stores: ptr([]string{"health", "docs"}), TopK: ptr(3), Grade: ptr(false)},
				Model:        &settings.ModelUpdate{Generator: ptr("gpt-4o-mini"), Temperature: ptr(0.0)},
				Prompts:      &settings.PromptsUpdate{System: ptr("optimizer_tools-default")},
			})
			if err != nil {
				t.Fatal(err)
			}
			want := settings.Defaults("chat_1")
			want.ToolsEnabled = []string{"Vector Search", "Web Search"}
			want.VectorSearch.Stores, want.VectorSearch.TopK, want.VectorSearch.Grade = []string{"health", "docs"}, 3, false
			want.Model.Generator, want.Model.Temperature = "gpt-4o-mini", 0
			want.Prompts.System = "optimizer_tools-default"
			want.Version, want.UpdatedAt = 1, "2026-11-26T06:00:00Z"
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("update: mismatch (-want +got):\n%s", diff)
			}
			read, err := s.Get(ctx, c.Tenant, "chat_1")
			if diff := cmp.Diff(want, read); err != nil || diff != "" {
				t.Errorf("read back: %v, mismatch (-want +got):\n%s", err, diff)
			}
			// Disabling every tool and clearing the stores are changes too.
			got, err = s.Update(ctx, c, settings.UpdateInput{ThreadID: "chat_1", ToolsEnabled: ptr([]string{}),
				VectorSearch: &settings.VectorSearchUpdate{Stores: ptr([]string{})}})
			if err != nil || len(got.ToolsEnabled) != 0 || got.VectorSearch.Stores == nil || len(got.VectorSearch.Stores) != 0 ||
				got.VectorSearch.TopK != 3 || got.Version != 2 {
				t.Errorf("second update: %+v, %v", got, err)
			}
		})

		t.Run("bad input is refused, names the field, and changes nothing", func(t *testing.T) {
			c := caller("alice")
			for _, tc := range []struct {
				name      string
				in        settings.UpdateInput
				wantField string
			}{
				{"an unknown tool", settings.UpdateInput{ToolsEnabled: ptr([]string{"Vector Search", "Shell"})}, "tools_enabled[1]"},
				{"a tool twice", settings.UpdateInput{ToolsEnabled: ptr([]string{"Web Search", "Web Search"})}, "tools_enabled[1]"},
				{"a bad store alias", settings.UpdateInput{VectorSearch: &settings.VectorSearchUpdate{Stores: ptr([]string{"ok", "../etc"})}}, "vector_search.stores[1]"},
				{"too many stores", settings.UpdateInput{VectorSearch: &settings.VectorSearchUpdate{Stores: ptr(manyStores(settings.MaxStores + 1))}}, "vector_search.stores"},
				{"an unknown mode", settings.UpdateInput{VectorSearch: &settings.VectorSearchUpdate{Mode: ptr("semantic")}}, "vector_search.mode"},
				{"top_k 0", settings.UpdateInput{VectorSearch: &settings.VectorSearchUpdate{TopK: ptr(0)}}, "vector_search.top_k"},
				{"top_k too large", settings.UpdateInput{VectorSearch: &settings.VectorSearchUpdate{TopK: ptr(1 << 40)}}, "vector_search.top_k"},
				{"a model outside the allow-list", settings.UpdateInput{Model: &settings.ModelUpdate{Generator: ptr("gpt-5-turbo-max")}}, "model.generator"},
				{"a negative temperature", settings.UpdateInput{Model: &settings.ModelUpdate{Temperature: ptr(-0.1)}}, "model.temperature"},
				{"a NaN temperature", settings.UpdateInput{Model: &settings.ModelUpdate{Temperature: ptr(math.NaN())}}, "model.temperature"},
				{"max_tokens too large", settings.UpdateInput{Model: &settings.ModelUpdate{MaxTokens: ptr(settings.MaxTokens + 1)}}, "model.max_tokens"},
				{"a system prompt that is not one", settings.UpdateInput{Prompts: &settings.PromptsUpdate{System: ptr("optimizer_vs-grade")}}, "prompts.system"},
				{"a malformed thread", settings.UpdateInput{ThreadID: strings.Repeat("x", 200)}, "thread_id"},
				{"a negative version", settings.UpdateInput{Version: -1}, "version"},
				{"a valid change beside a bad one", settings.UpdateInput{VectorSearch: &settings.VectorSearchUpdate{TopK: ptr(9), Mode: ptr("nope")}}, "vector_search.mode"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					if tc.in.ThreadID == "" {
						tc.in.ThreadID = "chat_bad"
					}
					_, err := s.Update(ctx, c, tc.in)
					if fieldOf(err) != tc.wantField {
						t.Errorf("got %v, want an error naming %s", err, tc.wantField)
					}
					if got, _ := s.Get(ctx, c.Tenant, "chat_bad"); got.Version != 0 {
						t.Errorf("the refused update changed the settings: %+v", got)
					}
				})
			}
		})

		t.Run("without an allow-list only the configured model is accepted", func(t *testing.T) {
			_, err := settings.New(tbl, nil).Update(ctx, caller("alice"), settings.UpdateInput{Model: &settings.ModelUpdate{Generator: ptr("gpt-4o-mini")}})
			if fieldOf(err) != "model.generator" {
				t.Errorf("got %v, want an error naming model.generator", err)
			}
		})

		t.Run("an update at a stale version is a conflict", func(t *testing.T) {
			c := caller("alice")
			if _, err := s.Update(ctx, c, settings.UpdateInput{ThreadID: "chat_1", VectorSearch: &settings.VectorSearchUpdate{TopK: ptr(7)}}); err != nil {
				t.Fatal(err)
			}
			_, err := s.Update(ctx, c, settings.UpdateInput{ThreadID: "chat_1", Version: 5, VectorSearch: &settings.VectorSearchUpdate{TopK: ptr(8)}})
			if fault.KindOf(err) != fault.KindConflict {
				t.Errorf("got %v, want a conflict", err)
			}
			if got, err := s.Update(ctx, c, settings.UpdateInput{ThreadID: "chat_1", Version: 1, VectorSearch: &settings.VectorSearchUpdate{TopK: ptr(8)}}); err != nil || got.VectorSearch.TopK != 8 {
				t.Errorf("at the current version: %+v, %v", got, err)
			}
		})

		t.Run("concurrent updates of different options all land", func(t *testing.T) {
			c := caller("alice")
			updates := []settings.UpdateInput{
				{VectorSearch: &settings.VectorSearchUpdate{TopK: ptr(9)}},
				{VectorSearch: &settings.VectorSearchUpdate{Mode: ptr("bm25")}},
				{VectorSearch: &settings.VectorSearchUpdate{Rephrase: ptr(false)}},
				{VectorSearch: &settings.VectorSearchUpdate{Stores: ptr([]string{"docs"})}},
				{Model: &settings.ModelUpdate{Temperature: ptr(1.5)}},
				{Model: &settings.ModelUpdate{MaxTokens: ptr(512)}},
				{ToolsEnabled: ptr([]string{"Connectors"})},
				{Prompts: &settings.PromptsUpdate{System: ptr("optimizer_tools-default")}},
			}
			var wg sync.WaitGroup
			for _, in := range updates {
				wg.Add(1)
				go func() {
					defer wg.Done()
					in.ThreadID = "chat_race"
					if _, err := s.Update(ctx, c, in); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			got, err := s.Get(ctx, c.Tenant, "chat_race")
			if err != nil {
				t.Fatal(err)
			}
			want := settings.Defaults("chat_race")
			want.VectorSearch = settings.VectorSearch{Stores: []string{"docs"}, Mode: "bm25", TopK: 9, Rephrase: false, Grade: true}
			want.Model = settings.Model{Temperature: 1.5, MaxTokens: 512}
			want.ToolsEnabled = []string{"Connectors"}
			want.Prompts.System = "optimizer_tools-default"
			want.Version, want.UpdatedAt = int64(len(updates)), "2026-11-26T06:00:00Z"
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("an update was lost: mismatch (-want +got):\n%s", diff)
			}
		})

		t.Run("one tenant's or principal's settings are not another's", func(t *testing.T) {
			a, b := caller("alice"), caller("alice")
			if _, err := s.Update(ctx, a, settings.UpdateInput{ThreadID: "shared", VectorSearch: &settings.VectorSearchUpdate{TopK: ptr(2)}}); err != nil {
				t.Fatal(err)
			}
			if got, _ := s.Get(ctx, b.Tenant, "shared"); got.Version != 0 || got.VectorSearch.TopK != settings.DefaultTopK {
				t.Errorf("tenant b reads %+v", got)
			}
			// Without a thread id, each principal has a default thread of its own.
			if _, err := s.Update(ctx, a, settings.UpdateInput{VectorSearch: &settings.VectorSearchUpdate{TopK: ptr(4)}}); err != nil {
				t.Fatal(err)
			}
			bob := tenant.Caller{Tenant: a.Tenant, Principal: "bob"}
			if got, _ := s.Current(ctx, bob, settings.GetInput{}); got.Version != 0 {
				t.Errorf("bob's default thread reads alice's: %+v", got)
			}
			if got, _ := s.Current(ctx, a, settings.GetInput{}); got.VectorSearch.TopK != 4 || got.ThreadID != settings.DefaultThread("alice") {
				t.Errorf("alice's default thread: %+v", got)
			}
		})

		t.Run("a damaged item is an error, not the defaults", func(t *testing.T) {
			c := caller("alice")
			if err := tbl.Put(ctx, store.Item{PK: tenant.Key(c.Tenant) + "settings#chat_1", SK: "settings",
				Attrs: store.Attrs{"doc": "{not json", "version": 1}}, store.Condition{}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Get(ctx, c.Tenant, "chat_1"); err == nil || errors.Is(err, store.ErrNotFound) {
				t.Errorf("got %v, want a decoding error", err)
			}
		})
	})
}

func manyStores(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "s" + strings.Repeat("x", i%10) + string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	return out
}

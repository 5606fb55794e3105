package gateway_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/profile"
)

// upstreamResource is the resource the profile harness's upstream offers;
// proxiedResource is the URI the gateway lists it under.
const (
	upstreamResource = "note://forecast"
	proxiedResource  = "connector://up/" + upstreamResource
)

// entries are resources and prompts of every kind the profiles hold: a
// connector's, seed 000's vector search prompt, its basic chat prompt (in
// no group), and no one's (a connector's prompt that does not exist).
var entries = []struct {
	kind, name string
	exists     bool
}{
	{"resource", proxiedResource, true},
	{"prompt", "up__brief", true},
	{"prompt", "up__gone", false},
	{"prompt", "optimizer_vs-grade", true},
	{"prompt", "optimizer_basic-default", true},
}

// listedEntries returns the resources and prompts cs is listed in thread,
// and the caching of both lists.
func listedEntries(t *testing.T, cs *mcp.ClientSession, thread string) ([]string, []mcp.Cacheable) {
	t.Helper()
	rs, err := cs.ListResources(context.Background(), &mcp.ListResourcesParams{Meta: threadMeta(thread)})
	if err != nil {
		t.Fatalf("resources/list: %v", err)
	}
	ps, err := cs.ListPrompts(context.Background(), &mcp.ListPromptsParams{Meta: threadMeta(thread)})
	if err != nil {
		t.Fatalf("prompts/list: %v", err)
	}
	var names []string
	for _, r := range rs.Resources {
		names = append(names, r.URI)
	}
	for _, p := range ps.Prompts {
		names = append(names, p.Name)
	}
	return names, []mcp.Cacheable{rs.Cacheable, ps.Cacheable}
}

// use reads the resource, or gets the prompt, named name as cs in thread.
func use(cs *mcp.ClientSession, kind, name, thread string) error {
	ctx := context.Background()
	if kind == "resource" {
		_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: name, Meta: threadMeta(thread)})
		return err
	}
	_, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Meta: threadMeta(thread)})
	return err
}

func TestAHostSeesAndUsesOnlyTheResourcesAndPromptsItsProfileEnables(t *testing.T) {
	h := newProfileHarness(t)
	vs, conn := catalog.GroupVectorSearch, catalog.GroupConnectors
	h.setThread(t, "chat_vs", vs)
	h.setThread(t, "chat_conn", conn)
	h.setThread(t, "chat_all", vs, conn, catalog.GroupWebSearch)
	connector := []string{proxiedResource, "up__brief", "up__gone"}
	all := append([]string{"optimizer_vs-grade", "optimizer_basic-default"}, connector...)
	for _, tc := range []struct {
		name    string
		key     profile.Profile
		thread  string
		enabled []string // of the entries
		refuser string   // what a refusal names: "API key" or the thread
	}{
		{"a key without a profile, in no thread, may use every one", profile.Profile{}, "", all, ""},
		{"a key enabling Vector Search alone hides the connectors'", profile.Profile{Groups: []string{vs}}, "",
			[]string{"optimizer_vs-grade", "optimizer_basic-default"}, "API key"},
		{"a key enabling Connectors alone hides the vector search prompts", profile.Profile{Groups: []string{conn}}, "",
			append([]string{"optimizer_basic-default"}, connector...), "API key"},
		{"a key enabling no group keeps the basic chat prompt", profile.Profile{Groups: []string{}}, "",
			[]string{"optimizer_basic-default"}, "API key"},
		{"a key's allow list of tools admits no connector it does not name", profile.Profile{Allow: []string{"memory_*", "optimizer_*"}}, "",
			[]string{"optimizer_vs-grade", "optimizer_basic-default"}, "API key"},
		{"a key's allow pattern of a connector admits its resources and prompts", profile.Profile{Allow: []string{"up__*", "optimizer_basic-default"}}, "",
			append([]string{"optimizer_basic-default"}, connector...), "API key"},
		{"a key's deny pattern of a connector takes its resources and prompts away", profile.Profile{Deny: []string{"up__*"}}, "",
			[]string{"optimizer_vs-grade", "optimizer_basic-default"}, "API key"},
		{"a thread enabling Vector Search hides the connectors'", profile.Profile{}, "chat_vs",
			[]string{"optimizer_vs-grade", "optimizer_basic-default"}, "chat_vs"},
		{"a thread enabling Connectors hides the vector search prompts", profile.Profile{}, "chat_conn",
			append([]string{"optimizer_basic-default"}, connector...), "chat_conn"},
		{"a thread cannot enable what the key does not", profile.Profile{Groups: []string{vs}}, "chat_all",
			[]string{"optimizer_vs-grade", "optimizer_basic-default"}, "API key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := h.connect(t, h.key(t, tc.key), nil)
			names, caching := listedEntries(t, cs, tc.thread)
			for _, e := range entries {
				want := slices.Contains(tc.enabled, e.name)
				if got := slices.Contains(names, e.name); got != (want && e.exists) {
					t.Errorf("the lists show %s: %v, want %v", e.name, got, want && e.exists)
				}
				err := use(cs, e.kind, e.name, tc.thread)
				switch {
				case want && e.exists && err != nil:
					t.Errorf("using %s %s: %v, want it served", e.kind, e.name, err)
				case !want && (err == nil || !strings.Contains(err.Error(), e.name) || !strings.Contains(err.Error(), "not enable") || !strings.Contains(err.Error(), tc.refuser)):
					t.Errorf("using %s %s: %v; want a refusal naming it and %s, the same whether it exists or not", e.kind, e.name, err, tc.refuser)
				}
			}
			for _, c := range caching {
				if tc.key.IsZero() && tc.thread == "" {
					continue
				}
				if c.CacheScope != "private" {
					t.Errorf("a list held to a profile is cached %+v, want private", c)
				}
			}
		})
	}
}

// A resources/list or prompts/list whose profile disables Connectors costs
// no listing of them.
func TestAResourceOrPromptListWithoutConnectorsDoesNotListThem(t *testing.T) {
	h := newProfileHarness(t)
	for _, tc := range []struct {
		name     string
		key      profile.Profile
		listings int
	}{
		{"a key enabling Connectors", profile.Profile{}, 2},
		{"a key not enabling them", profile.Profile{Groups: []string{catalog.GroupVectorSearch}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := h.connect(t, h.key(t, tc.key), nil)
			before := h.listings.count()
			listedEntries(t, cs, "")
			if got := h.listings.count() - before; got != tc.listings {
				t.Errorf("resources/list and prompts/list listed the connectors %d times, want %d", got, tc.listings)
			}
		})
	}
}

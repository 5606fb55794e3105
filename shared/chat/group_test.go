package chat_test

import (
	"context"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/chat"
)

// The tools a chat offers are in the catalog's groups (seed 000: with
// Vector Search off, no optimizer_vs-* tool), and those in none in
// Switchboard's, always on.
func TestTheChatsToolsAreInTheCatalogsGroups(t *testing.T) {
	e := newEnv(t, nil)
	tools, err := (&chat.Invoked{Catalog: catalog.Default(), Invoker: e.stack}).List(context.Background(), alice)
	if err != nil {
		t.Fatal(err)
	}
	groups := map[string]string{}
	for _, tl := range tools {
		groups[tl.Name] = tl.Group
	}
	for name, want := range map[string]string{
		"optimizer_vs-storage":    chat.ToolsVectorSearch,
		"memory_get_all_messages": chat.ToolsSwitchboard,
		"vector_store_list":       chat.ToolsSwitchboard,
	} {
		if got, ok := groups[name]; !ok || got != want {
			t.Errorf("%s offered in group %q (listed: %v), want %q", name, got, ok, want)
		}
	}
}

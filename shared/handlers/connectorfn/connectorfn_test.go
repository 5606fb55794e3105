package connectorfn

import (
	"encoding/json"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/catalog"
)

// connector_tools_openai's include_switchboard adds every public tool of the
// catalog, with its input schema as the parameters, and no internal one.
func TestOwnToolsAreTheCatalogsPublicToolsInOpenAIFormat(t *testing.T) {
	got := map[string]json.RawMessage{}
	for _, tl := range ownTools() {
		if tl.Type != "function" || tl.Function.Description == "" {
			t.Errorf("%s: %+v, want a described function", tl.Function.Name, tl)
		}
		got[tl.Function.Name] = tl.Function.Parameters
	}
	for _, tl := range catalog.Default().Tools() {
		params, listed := got[tl.Name]
		if listed != (tl.Visibility == catalog.Public) {
			t.Errorf("%s (%s) listed: %v", tl.Name, tl.Visibility, listed)
		}
		var schema map[string]any
		if listed && (json.Unmarshal(params, &schema) != nil || schema["type"] != "object") {
			t.Errorf("%s's parameters are not its object schema: %s", tl.Name, params)
		}
	}
}

package toolschema

import (
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/switchboard-dev/switchboard/shared/websearch"
)

// webSearchSchemas returns the schemas of the web search family's tools.
func webSearchSchemas() map[string]pair {
	query := func(p map[string]*jsonschema.Schema) { textField(p["query"], websearch.MaxQueryChars) }
	return map[string]pair{
		"duckduckgo_search": {schemaFor[websearch.DuckDuckGoInput](query), schemaFor[websearch.DuckDuckGoOutput](nil)},
		"web_search": {schemaFor[websearch.SearchInput](func(p map[string]*jsonschema.Schema) {
			query(p)
			p["max_results"].Minimum, p["max_results"].Maximum = ptr(1.0), ptr(float64(websearch.MaxResults))
			p["region"].Pattern = websearch.RegionPattern
			p["safe_search"].Enum = enum(websearch.SafeLevels...)
			p["backend"].Enum = enum(websearch.BackendNames...)
		}), schemaFor[websearch.SearchOutput](nil)},
	}
}

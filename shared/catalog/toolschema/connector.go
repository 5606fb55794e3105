package toolschema

import (
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/switchboard-dev/switchboard/shared/connector"
)

// connectorNamePattern is connector.ValidateName's rule: a lowercase letter,
// then lowercase letters and digits with single underscores between them.
const connectorNamePattern = `^[a-z][a-z0-9]*(_[a-z0-9]+)*$`

func connectorName(s *jsonschema.Schema) {
	s.Pattern, s.MinLength, s.MaxLength = connectorNamePattern, ptr(1), ptr(connector.MaxNameLen)
}

// credentialFields bounds the base URL, transport and credentials of
// connector_create and connector_update.
func credentialFields(p map[string]*jsonschema.Schema) {
	p["base_url"].MaxLength = ptr(connector.MaxURLLen)
	p["transport"].Enum = []any{connector.TransportStreamable, connector.TransportSSE}
	h := p["headers"]
	h.MaxProperties = ptr(connector.MaxHeaders)
	h.AdditionalProperties.MinLength, h.AdditionalProperties.MaxLength = ptr(1), ptr(connector.MaxHeaderValueLen)
	o := p["oauth"].Properties
	o["token_url"].MaxLength = ptr(connector.MaxURLLen)
	o["client_id"].MinLength, o["client_id"].MaxLength = ptr(1), ptr(512)
	o["client_secret"].MinLength, o["client_secret"].MaxLength = ptr(1), ptr(4096)
	o["scopes"].MaxItems = ptr(connector.MaxScopes)
	o["scopes"].Items.MinLength, o["scopes"].Items.MaxLength = ptr(1), ptr(256)
}

// connectorSchemas returns the schemas of the connectors family's tools.
func connectorSchemas() map[string]pair {
	named := schemaFor[connector.NameInput](func(p map[string]*jsonschema.Schema) { connectorName(p["name"]) })
	one := schemaFor[connector.ConnectorOutput](nil)
	policy := func(p map[string]*jsonschema.Schema) { connectorName(p["connector"]) }
	approval := schemaFor[connector.ApprovalInput](func(p map[string]*jsonschema.Schema) { p["id"].MinLength, p["id"].MaxLength = ptr(1), ptr(128) })
	approved := schemaFor[connector.ApprovalOutput](nil)
	return map[string]pair{
		"connector_create": {schemaFor[connector.CreateInput](func(p map[string]*jsonschema.Schema) {
			connectorName(p["name"])
			credentialFields(p)
		}), one},
		"connector_get": {named, one},
		"connector_list": {schemaFor[connector.ListInput](func(p map[string]*jsonschema.Schema) {
			p["cursor"].MaxLength = ptr(1024)
			p["limit"].Minimum, p["limit"].Maximum = ptr(1.0), ptr(float64(connector.MaxListLimit))
		}), schemaFor[connector.ListOutput](nil)},
		"connector_update": {schemaFor[connector.UpdateInput](func(p map[string]*jsonschema.Schema) {
			connectorName(p["name"])
			credentialFields(p)
			p["version"].Minimum = ptr(1.0)
		}), one},
		"connector_delete": {schemaFor[connector.DeleteInput](func(p map[string]*jsonschema.Schema) {
			connectorName(p["name"])
			p["version"].Minimum = ptr(0.0)
		}), schemaFor[connector.DeleteOutput](nil)},
		"connector_verify": {named, schemaFor[connector.VerifyOutput](nil)},
		"connector_sync":   {named, schemaFor[connector.SyncOutput](nil)},
		"approval_policy_set": {schemaFor[connector.PolicySetInput](func(p map[string]*jsonschema.Schema) {
			policy(p)
			p["tool"].MinLength, p["tool"].MaxLength = ptr(1), ptr(128)
			p["policy"].Enum = []any{connector.PolicyAllow, connector.PolicyDeny, connector.PolicyAsk}
		}), schemaFor[connector.PolicyOutput](nil)},
		"approval_policy_list": {schemaFor[connector.PolicyListInput](policy), schemaFor[connector.PolicyListOutput](nil)},
		"connector_tools_openai": {schemaFor[connector.OpenAIInput](nil), schemaFor[connector.OpenAIOutput](func(p map[string]*jsonschema.Schema) {
			// A JSON Schema as the tool gave it (raw JSON, which inference
			// would take for an array of bytes).
			p["tools"].Items.Properties["function"].Properties["parameters"] = &jsonschema.Schema{Type: "object", Description: "the tool's input schema (JSON Schema)"}
		})},
		"connector_health": {schemaFor[connector.HealthInput](nil), schemaFor[connector.HealthOutput](nil)},
		// The internal tools of the proxy function: their outputs are MCP
		// results as the upstream gave them, objects of MCP's own schemas.
		"connector_call": {schemaFor[connector.CallInput](func(p map[string]*jsonschema.Schema) {
			p["name"].MinLength, p["name"].MaxLength = ptr(3), ptr(connector.MaxNameLen+2+128)
			p["arguments"] = &jsonschema.Schema{Type: "object", Description: "the proxied tool's arguments, as the host gave them"}
		}), anyObject},
		"connector_listing":       {schemaFor[connector.ListingInput](nil), schemaFor[connector.Listing](nil)},
		"connector_resource_read": {schemaFor[connector.ReadResourceInput](nil), anyObject},
		"connector_prompt_get":    {schemaFor[connector.GetPromptInput](nil), anyObject},
		"approval_get":            {approval, approved},
		"approval_approve":        {approval, approved},
		"approval_deny":           {approval, approved},
	}
}

// anyObject is the output schema of a tool answering an MCP result.
func anyObject() *jsonschema.Schema { return &jsonschema.Schema{Type: "object"} }

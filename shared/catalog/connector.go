package catalog

import (
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ConnectorFamily names the tools that put other MCP servers behind
// Switchboard (issue 12).
const ConnectorFamily = "connectors"

// connectorLimits leave an upstream its 10 s initialisation and 30 s call
// (package connector's defaults) within the function's timeout.
var connectorLimits = Limits{Timeout: 60 * time.Second, MemoryMB: 256}

// connectorTool completes t as a connectors tool: public, with the family's
// limits, reaching upstreams (Connects), reading the table or, if it
// mutates, writing it.
func connectorTool(t *Tool) *Tool {
	t.Family, t.Visibility, t.Limits, t.Connects = ConnectorFamily, Public, connectorLimits, true
	if t.Table == NoAccess {
		t.Table = Read
	}
	if t.Mutates {
		t.Table = ReadWrite
	}
	return t
}

func connectorTools() []*Tool {
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}
	// A read that may refresh a stale capability cache from the upstreams.
	refreshing := &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(true)}
	idempotent := &mcp.ToolAnnotations{DestructiveHint: ptr(false), IdempotentHint: true, OpenWorldHint: ptr(true)}
	overwrite := &mcp.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(false)}
	name := json.RawMessage(`{"name":"github"}`)
	return []*Tool{
		connectorTool(&Tool{
			Name: "connector_create", Function: "connectors/create", Title: "Register an MCP server",
			Description: "Registers an MCP server (streamable_http or the legacy sse transport) as a connector of your tenant; its tools are then listed as <name>__<tool> beside Switchboard's own once connector_sync has read them. Credentials are headers (such as Authorization) or OAuth client credentials, sealed and never shown again; principal_scoped keeps them for you alone. The URL must be https and resolve to public addresses (a local server allows the hosts of --allow-connector-hosts, over http too).",
			Mutates:     true, Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
			Example: json.RawMessage(`{"name":"docs","base_url":"https://mcp.example.com/mcp","transport":"streamable_http","headers":{"Authorization":"Bearer example-token"}}`),
			KeyUse:  KeySeal,
		}),
		connectorTool(&Tool{
			Name: "connector_get", Function: "connectors/get", Title: "Read a connector",
			Description: "Returns one connector: URL, transport, status (NEVER_CONNECTED, CONNECTED, ERROR, DISABLED), sync status and last error, when it was last synced, its version, and which kind of credentials it holds (never their values).",
			Annotations: readOnly, Example: name,
			KeyUse: KeyNone,
		}),
		connectorTool(&Tool{
			Name: "connector_list", Function: "connectors/list", Title: "List connectors",
			Description: "Lists your tenant's connectors by name, up to 100 a page (50 by default); pass next_cursor back as cursor to continue.",
			Annotations: readOnly, Example: json.RawMessage(`{"limit":20}`),
			KeyUse: KeyNone,
		}),
		connectorTool(&Tool{
			Name: "connector_update", Function: "connectors/update", Title: "Change a connector",
			Description: "Changes a connector's URL, transport or credentials, or disables it (disabled: true stops every call; false allows them again). Pass the version you read: a stale version is refused. Fields left out keep their value; clear_credentials removes the credentials (yours, with principal_scoped).",
			Mutates:     true, Annotations: overwrite, Example: json.RawMessage(`{"name":"github","version":1,"disabled":true}`),
			KeyUse: KeySeal,
		}),
		connectorTool(&Tool{
			Name: "connector_delete", Function: "connectors/delete", Title: "Remove a connector",
			Description: "Removes a connector with its credentials, cached capabilities and approval policies; its tools leave the listing. With version, only if it is still at that version.",
			Mutates:     true, Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(false)}, Example: name,
			KeyUse: KeyNone,
		}),
		connectorTool(&Tool{
			Name: "connector_verify", Function: "connectors/verify", Title: "Check a connector",
			Description: "Connects to the upstream with your credentials, initialises and pings it, and records the result as the connector's status (CONNECTED or ERROR with the reason).",
			Mutates:     true, Annotations: idempotent, Example: name,
			KeyUse: KeyOpen,
		}),
		connectorTool(&Tool{
			Name: "connector_sync", Function: "connectors/sync", Title: "Read a connector's capabilities",
			Description: "Reads the upstream's tools, resources and prompts into the connector's cache (fresh for the cache TTL, 5 minutes unless configured; refreshed on demand and every 5 minutes by a schedule). Names that would break MCP's tool-name rules once prefixed, or collide, are refused and reported with the reason; a failed sync keeps the last good cache and records why.",
			Mutates:     true, Annotations: idempotent, Example: name,
			KeyUse: KeyOpen,
		}),
		connectorTool(&Tool{
			Name: "approval_policy_set", Function: "connectors/policy_set", Title: "Set a tool's approval policy",
			Description: "Sets whether calls to one of a connector's tools run (ALWAYS_ALLOW), are refused and hidden from the listing (ALWAYS_DENY), or ask a person first (ASK_USER, the default): a client that answers forms is asked in the call, any other gets a link to an approval page, and the approval holds for that exact call once.",
			Mutates:     true, Annotations: overwrite,
			Example: json.RawMessage(`{"connector":"github","tool":"search","policy":"ALWAYS_ALLOW"}`),
			KeyUse:  KeyNone,
		}),
		connectorTool(&Tool{
			Name: "approval_policy_list", Function: "connectors/policy_list", Title: "List a connector's approval policies",
			Description: "Lists the approval policies set on a connector's tools; every other tool is ASK_USER.",
			Annotations: readOnly, Example: json.RawMessage(`{"connector":"github"}`),
			KeyUse: KeyNone,
		}),
		connectorTool(&Tool{
			Name: "connector_tools_openai", Function: "connectors/tools_openai", Title: "Export tools in OpenAI format",
			Description: "Returns the tools your connectors offer that can be called now (connected, cache valid, not denied) in OpenAI's function format, {\"type\":\"function\",\"function\":{\"name\",\"description\",\"parameters\"}}, for a chat backend's context.",
			Table:       ReadWrite, Annotations: refreshing, Example: json.RawMessage(`{}`),
			KeyUse: KeyOpen,
		}),
		connectorTool(&Tool{
			Name: "connector_health", Function: "connectors/health", Title: "Connector health",
			Description: "Reports each connector's status with its calls, errors, p50 and p95 latency, cache hits and misses and approvals requested, granted, denied and expired (counted per warm function instance), and overall down when every connector is in error.",
			Annotations: readOnly, Example: json.RawMessage(`{}`),
			KeyUse: KeyNone,
		}),
	}
}

// ConnectorSyncSchedule is how often the scheduled sync runs on AWS: the
// default cache TTL, so that a connector's cache is read again about once a
// TTL even when no call asks for it.
const ConnectorSyncSchedule = "rate(5 minutes)"

// connectorTriggers lists the scheduled sync: EventBridge Scheduler invokes
// it every 5 minutes, and it syncs the connectors of every tenant whose
// cache is older than the TTL. It is no tool, so no host can call it and
// the gateway cannot invoke it. Its timeout stays under the schedule's
// period, so that runs do not overlap.
func connectorTriggers() []*Trigger {
	return []*Trigger{{
		Function: "connectors/scheduled_sync", Family: ConnectorFamily,
		Description: "Syncs, every 5 minutes, the connectors of every tenant whose capability cache is older than the TTL; a failed sync keeps the last good cache and records why.",
		Limits:      Limits{Timeout: 4 * time.Minute, MemoryMB: 256},
		Table:       ReadWrite, Connects: true, KeyUse: KeyOpen, Schedule: ConnectorSyncSchedule,
	}}
}

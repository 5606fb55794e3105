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

// ConnectorSyncIndex is the partition of the connectors' sync index
// (package connector's SyncIndexPartition), outside every tenant's keys: a
// function that Connects writes its tenant's entries there in the same
// transaction as the tenant's items, so under tenant isolation its session
// may put (and, if it deletes, delete) items of that partition, never read
// them (config/tenantscoped).
const ConnectorSyncIndex = "_conn#sync"

// The internal tools through which the gateway proxies a tenant's connectors:
// one function (ConnectorProxyFunction) serves them all, so that the call,
// resource and prompt share its pooled upstream sessions. Hosts never see
// them; the gateway calls them for the proxied names it lists
// (<connector>__<tool>) and for the approval page.
const (
	ConnectorProxyFunction = "connectors/proxy"
	ConnectorCallTool      = "connector_call"
	ConnectorListingTool   = "connector_listing"
	ConnectorResourceTool  = "connector_resource_read"
	ConnectorPromptTool    = "connector_prompt_get"
	ApprovalGetTool        = "approval_get"
	ApprovalApproveTool    = "approval_approve"
	ApprovalDenyTool       = "approval_deny"
)

// proxyTool completes t as an internal tool of [ConnectorProxyFunction]:
// all of them write (a stale cache refreshed, a status, an approval), and
// the page's decisions are audited.
func proxyTool(t *Tool) *Tool {
	t.Function, t.Table = ConnectorProxyFunction, ReadWrite
	if t.KeyUse == KeySealOpen {
		t.KeyUse = KeyOpen // reaching an upstream opens credentials; none seals any
	}
	t.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: !t.Mutates, OpenWorldHint: ptr(true)}
	connectorTool(t)
	t.Visibility, t.GatewayCalls = Internal, true
	return t
}

func connectorProxyTools() []*Tool {
	approval := json.RawMessage(`{"id":"0123456789abcdef0123456789abcdef"}`)
	return []*Tool{
		proxyTool(&Tool{
			Name: ConnectorCallTool, Title: "Call a proxied tool",
			Description: "Internal: calls a connector's tool for the gateway, named <connector>__<tool> as listed, after its approval policy: the upstream's result as it gave it (isError included), its progress relayed.",
			// Not Mutates: the connector service appends each call's own
			// ToolCalled event (proxied name, outcome, arguments' digest),
			// after the answer, so the table write is off the call's path.
			Progress: true, // the upstream's, relayed as it reports it
			Example:  json.RawMessage(`{"name":"github__search","arguments":{"q":"switchboard"}}`),
			Group:    GroupConnectors,
		}),
		proxyTool(&Tool{
			Name: ConnectorListingTool, Title: "List proxied capabilities",
			Description: "Internal: what the caller's tenant's connected connectors offer under their proxied names (tools minus those denied, resources, prompts), from the capability cache, for the gateway's lists.",
			Example:     json.RawMessage(`{}`),
		}),
		proxyTool(&Tool{
			Name: ConnectorResourceTool, Title: "Read a proxied resource",
			Description: "Internal: reads connector://<connector>/<uri> from its upstream, for the gateway's resources/read.",
			Example:     json.RawMessage(`{"uri":"connector://github/file:///README.md"}`),
		}),
		proxyTool(&Tool{
			Name: ConnectorPromptTool, Title: "Get a proxied prompt",
			Description: "Internal: renders <connector>__<prompt> upstream, for the gateway's prompts/get.",
			Example:     json.RawMessage(`{"name":"github__summary","arguments":{"topic":"mcp"}}`),
		}),
		proxyTool(&Tool{
			Name: ApprovalGetTool, Title: "Read an approval",
			KeyUse:      KeyNone,
			Description: "Internal: a pending approval of a proxied call, for the gateway's approval page.",
			Example:     approval,
		}),
		proxyTool(&Tool{
			Name: ApprovalApproveTool, Title: "Grant an approval",
			KeyUse:      KeyNone,
			Description: "Internal: grants an approval of a proxied call (the approval page's Approve).",
			Mutates:     true,
			Example:     approval,
		}),
		proxyTool(&Tool{
			Name: ApprovalDenyTool, Title: "Deny an approval",
			KeyUse:      KeyNone,
			Description: "Internal: denies an approval of a proxied call (the approval page's Deny).",
			Mutates:     true,
			Example:     approval,
		}),
	}
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
			Mutates:     true, Deletes: true, Annotations: overwrite, Example: json.RawMessage(`{"name":"github","version":1,"disabled":true}`),
			KeyUse: KeySeal,
		}),
		connectorTool(&Tool{
			Name: "connector_delete", Function: "connectors/delete", Title: "Remove a connector",
			Description: "Removes a connector with its credentials, cached capabilities and approval policies; its tools leave the listing. With version, only if it is still at that version.",
			Mutates:     true, Deletes: true, Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(false)}, Example: name,
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
			Mutates:     true, Deletes: true, Annotations: idempotent, Example: name,
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
			Description: "Returns the tools your connectors offer that can be called now (connected, cache valid, not denied) in OpenAI's function format, {\"type\":\"function\",\"function\":{\"name\",\"description\",\"parameters\"}}, for a chat backend's context; with include_switchboard, Switchboard's own public tools first.",
			Table:       ReadWrite, Deletes: true, Annotations: refreshing, Example: json.RawMessage(`{"include_switchboard":true}`),
			KeyUse: KeyOpen,
		}),
		connectorTool(&Tool{
			// Served by the proxy function: its figures are those of the
			// instance that made the calls, cache lookups and approvals.
			Name: "connector_health", Function: ConnectorProxyFunction, Title: "Connector health",
			Description: "Reports each connector's status with its calls, errors, p50 and p95 latency, cache hits and misses (counted per warm function instance) and approvals requested, granted, denied and expired (stored, every instance's; a lapsed approval counts as expired without anyone opening it), and overall down when every connector is in error.",
			Annotations: readOnly, Example: json.RawMessage(`{}`),
			KeyUse: KeyNone,
		}),
	}
}

// ConnectorSyncSchedule is how often the scheduled sync runs on AWS,
// [ConnectorSyncPeriod]: the default cache TTL. Each run syncs the
// connectors whose cache would go stale before the next, so that a cache
// the schedule keeps is not read stale.
const ConnectorSyncSchedule = "rate(5 minutes)"

// ConnectorSyncPeriod is [ConnectorSyncSchedule]'s period.
const ConnectorSyncPeriod = 5 * time.Minute

// connectorTriggers lists the scheduled sync: EventBridge Scheduler invokes
// it every 5 minutes, and it syncs the connectors of every tenant whose
// cache would be older than the TTL by its next run. It is no tool, so no
// host can call it and the gateway cannot invoke it. Its timeout stays under the schedule's
// period, so that runs do not overlap.
func connectorTriggers() []*Trigger {
	return []*Trigger{{
		Function: "connectors/scheduled_sync", Family: ConnectorFamily,
		Description: "Syncs, every 5 minutes, the connectors of every tenant whose capability cache would be older than the TTL by the next run (a failed sync keeps the last good cache and records why), after recording as expired every approval that lapsed unanswered.",
		Limits:      Limits{Timeout: 4 * time.Minute, MemoryMB: 256},
		Table:       ReadWrite, Connects: true, KeyUse: KeyOpen, Deletes: true, Schedule: ConnectorSyncSchedule,
	}}
}

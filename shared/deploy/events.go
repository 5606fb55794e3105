package deploy

import (
	"encoding/json"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// The fixed values of the sample events. The trace id is the one in
// get_audit_trace's example, so replaying the events of mutating tools and
// then get_audit_trace's finds their audit events.
const (
	// SampleConnector is the connector the sample events name, registered
	// at SampleConnectorHost, which the sample functions allow.
	SampleConnector       = "github"
	SampleConnectorHost   = "mcp.example.com"
	SampleTenant          = "demo"
	SamplePrincipal       = "demo"
	SampleRequestID       = "c6af9ac6-7b61-11e6-9a41-93e8deadbeef"
	SampleTraceID         = "4bf92f3577b34da6a3ce929d0e0e4736"
	SampleProtocolVersion = "2025-11-25"
	// SampleConversation is the conversation the memory tools' examples name;
	// it must exist for their events to succeed.
	SampleConversation = "chat_demo"
)

// SAMLocalEnvFile is the environment file for sam local invoke --env-vars:
// it points every function at an embedded table inside the container, and lets
// the gateway serve requests without an API key as the sample tenant.
const SAMLocalEnvFile = EventsDir + "/env.json"

// An Event is one sample event, as Lambda would deliver it to a function.
type Event struct {
	// Path is the event's file, relative to the repository root.
	Path string
	// Function is the path under functions/ of the function it is for.
	Function string
	// Method is the MCP method it carries: initialize, tools/list,
	// tools/call, resources/list or resources/read.
	Method string
	// Name is the tool it calls, or the URI it reads, if any.
	Name    string
	Payload []byte
}

// Events returns the sample events of every function: API Gateway HTTP API
// requests for the gateway (initialize, tools/list and tools/call), and an
// [invoke.Request] envelope for each tool and resource method, built from the
// catalog's examples. A function with one event has it in
// events/<path>.json, one with several in events/<path>/<name>.json.
func Events(cat *catalog.Catalog) ([]Event, error) {
	evs, err := gatewayEvents(cat)
	if err != nil {
		return nil, err
	}
	for _, f := range cat.Functions() {
		if f.Trigger != nil && f.Trigger.Schedule != "" {
			evs = append(evs, Event{Path: EventsDir + "/" + f.Path + ".json", Function: f.Path, Method: MethodSchedule, Name: f.Trigger.Schedule, Payload: []byte("{}\n")})
			continue
		}
		if f.Trigger != nil {
			ev, err := s3Event(f)
			if err != nil {
				return nil, err
			}
			evs = append(evs, ev)
			continue
		}
		var mine []pendingEvent
		for _, t := range cat.Tools() {
			if t.Function != f.Path {
				continue
			}
			args := t.Example
			if len(args) == 0 {
				args = json.RawMessage("{}")
			}
			mine = append(mine, envelope(f.Path, t.Name, &invoke.Request{Method: invoke.MethodCallTool, Tool: t.Name, Arguments: args}))
		}
		for _, r := range cat.Resources() {
			if r.Function != f.Path {
				continue
			}
			if r.Lists {
				mine = append(mine, envelope(f.Path, "list", &invoke.Request{Method: invoke.MethodListResources}))
			}
			uri := r.URI
			if uri == "" {
				uri = r.Example
			}
			if uri != "" {
				mine = append(mine, envelope(f.Path, "read", &invoke.Request{Method: invoke.MethodReadResource, URI: uri}))
			}
		}
		for i := range mine {
			if len(mine) == 1 {
				mine[i].path = EventsDir + "/" + f.Path + ".json"
			}
			b, err := marshalIndent(mine[i].request)
			if err != nil {
				return nil, fmt.Errorf("deploy: encoding event %s: %w", mine[i].path, err)
			}
			evs = append(evs, Event{Path: mine[i].path, Function: f.Path, Method: mine[i].request.Method, Name: mine[i].name, Payload: b})
		}
	}
	return evs, nil
}

// MethodSchedule is the Method of a scheduled trigger's sample event: the
// input its schedule sends, {} (the template's Target.Input).
const MethodSchedule = "schedule"

// SampleS3Key is the object key of the sample S3 event of a trigger: a
// document of the sample tenant, under its prefix.
const SampleS3Key = "tenants/" + SampleTenant + "/documents/kb/sample.md"

// MethodS3 is the Method of a sample S3 event.
const MethodS3 = "s3:ObjectCreated:Put"

// s3Event is the sample event of a trigger: an S3 notification of an upload
// of SampleS3Key, as S3 delivers it to Lambda (aws-lambda-go's events.S3Event).
func s3Event(f catalog.Function) (Event, error) {
	key := SampleS3Key
	if f.Trigger.S3 == nil || !strings.HasPrefix(key, f.Trigger.S3.Prefix) || !strings.HasSuffix(key, f.Trigger.S3.Suffix) {
		return Event{}, fmt.Errorf("deploy: trigger %s has no S3 events that %s matches", f.Path, key)
	}
	ev := events.S3Event{Records: []events.S3EventRecord{{
		EventVersion: "2.1", EventSource: "aws:s3", AWSRegion: "us-east-1",
		EventTime: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), EventName: strings.TrimPrefix(MethodS3, "s3:"),
		PrincipalID:       events.S3UserIdentity{PrincipalID: "AWS:AIDAEXAMPLE"},
		RequestParameters: events.S3RequestParameters{SourceIPAddress: "192.0.2.1"},
		ResponseElements:  map[string]string{"x-amz-request-id": "C3D13FE58DE4C810", "x-amz-id-2": "FMyUVURIY8/IgAtTv8xRjskZQpcIZ9KG4V5Wp6S7S/JRWeUWerMUE5JgHvANOjpD"},
		S3: events.S3Entity{
			SchemaVersion: "1.0", ConfigurationID: "BucketObjects",
			Bucket: events.S3Bucket{Name: "switchboard-sample", OwnerIdentity: events.S3UserIdentity{PrincipalID: "A3NL1KOZZKExample"}, Arn: "arn:aws:s3:::switchboard-sample"},
			Object: events.S3Object{Key: key, Size: 1024, ETag: "d41d8cd98f00b204e9800998ecf8427e", Sequencer: "0055AED6DCD90281E5"},
		},
	}}}
	b, err := marshalIndent(ev)
	if err != nil {
		return Event{}, fmt.Errorf("deploy: encoding the S3 event of %s: %w", f.Path, err)
	}
	return Event{Path: EventsDir + "/" + f.Path + ".json", Function: f.Path, Method: MethodS3, Name: key, Payload: b}, nil
}

type pendingEvent struct {
	path    string
	name    string
	request *invoke.Request
}

func envelope(function, name string, req *invoke.Request) pendingEvent {
	req.Caller = tenant.Caller{Tenant: SampleTenant, Principal: SamplePrincipal}
	req.RequestID, req.TraceID, req.ProtocolVersion = SampleRequestID, SampleTraceID, SampleProtocolVersion
	ev := pendingEvent{path: path.Join(EventsDir, function, name+".json"), name: name, request: req}
	if req.Tool != "" {
		ev.name = req.Tool
	} else if req.URI != "" {
		ev.name = req.URI
	}
	return ev
}

// gatewayEvents returns the gateway's sample requests. tools/call calls the
// first public tool of the catalog with its example arguments.
func gatewayEvents(cat *catalog.Catalog) ([]Event, error) {
	var call *catalog.Tool
	for _, t := range cat.Tools() {
		if t.Visibility == catalog.Public {
			call = t
			break
		}
	}
	if call == nil {
		return nil, fmt.Errorf("deploy: the catalog has no public tool for the gateway's tools/call event")
	}
	args := call.Example
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	reqs := []struct {
		file, method, name string
		params             any
	}{
		{"initialize", "initialize", "", map[string]any{
			"protocolVersion": SampleProtocolVersion,
			"capabilities":    map[string]any{},
			"clientInfo":      map[string]any{"name": "sam-local", "version": "1.0.0"},
		}},
		{"tools-list", "tools/list", "", map[string]any{}},
		{"tools-call", "tools/call", call.Name, map[string]any{"name": call.Name, "arguments": args}},
	}
	var out []Event
	for i, r := range reqs {
		body, err := json.Marshal(struct {
			JSONRPC string `json:"jsonrpc"`
			ID      int    `json:"id"`
			Method  string `json:"method"`
			Params  any    `json:"params"`
		}{"2.0", i + 1, r.method, r.params})
		if err != nil {
			return nil, fmt.Errorf("deploy: encoding %s: %w", r.method, err)
		}
		b, err := apiEvent("POST", "/mcp", "ANY /mcp", string(body), int64(i))
		if err != nil {
			return nil, fmt.Errorf("deploy: encoding %s event: %w", r.method, err)
		}
		out = append(out, Event{
			Path: EventsDir + "/" + GatewayPath + "/" + r.file + ".json", Function: GatewayPath,
			Method: r.method, Name: r.name, Payload: b,
		})
	}
	return out, nil
}

// apiEvent returns an API Gateway HTTP API (payload format 2.0) request as
// AWS sends it, from a host that has no API key.
func apiEvent(method, rawPath, routeKey, body string, n int64) ([]byte, error) {
	const (
		apiID  = "a1b2c3d4e5"
		domain = apiID + ".execute-api.us-east-1.amazonaws.com"
		agent  = "claude-code/2.0.0"
		source = "203.0.113.7"
	)
	epoch := int64(1795852800000) + n*1000 // 2026-11-28T08:00:00Z
	e := events.APIGatewayV2HTTPRequest{
		Version:        "2.0",
		RouteKey:       routeKey,
		RawPath:        rawPath,
		RawQueryString: "",
		Headers: map[string]string{
			"accept":               "application/json, text/event-stream",
			"content-length":       strconv.Itoa(len(body)),
			"content-type":         "application/json",
			"host":                 domain,
			"mcp-protocol-version": SampleProtocolVersion,
			"traceparent":          "00-" + SampleTraceID + "-00f067aa0ba902b7-01",
			"user-agent":           agent,
			"x-amzn-trace-id":      "Root=1-6928a6c0-3f1c2a4b5d6e7f8091a2b3c4",
			"x-forwarded-for":      source,
			"x-forwarded-port":     "443",
			"x-forwarded-proto":    "https",
		},
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RouteKey:     routeKey,
			AccountID:    "123456789012",
			Stage:        "$default",
			RequestID:    "VmYd8hBXoAMEbQg=",
			APIID:        apiID,
			DomainName:   domain,
			DomainPrefix: apiID,
			Time:         "28/Nov/2026:08:00:0" + strconv.FormatInt(n, 10) + " +0000",
			TimeEpoch:    epoch,
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
				Method: method, Path: rawPath, Protocol: "HTTP/1.1", SourceIP: source, UserAgent: agent,
			},
		},
		Body: body,
	}
	// The events type always writes requestContext.authentication, which
	// API Gateway sends only with mutual TLS; drop it by way of a map.
	raw, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	delete(m["requestContext"].(map[string]any), "authentication")
	return marshalIndent(m)
}

// SAMLocalEnv returns the content of [SAMLocalEnvFile].
func SAMLocalEnv() ([]byte, error) {
	return marshalIndent(map[string]any{"Parameters": map[string]string{
		config.EnvTable:            config.FilePrefix + "/tmp/switchboard/switchboard.db",
		config.EnvAnonymousTenant:  SampleTenant,
		config.EnvRequestStateKeys: config.FilePrefix + "/tmp/switchboard/request-state-keys.json",
	}})
}

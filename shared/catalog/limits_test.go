package catalog_test

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/memory"
)

// maxJSONBytes is the length of the largest JSON value s admits, written
// without escapes (ASCII strings at their maxLength, arrays at maxItems,
// objects with every property), or -1 if s bounds no size; unbounded names
// the first value that does not.
func maxJSONBytes(s *jsonschema.Schema, path string, unbounded *string) int64 {
	if s == nil {
		*unbounded = cmp.Or(*unbounded, path)
		return -1
	}
	if len(s.Enum) > 0 {
		var n int64
		for _, v := range s.Enum {
			b, _ := json.Marshal(v)
			n = max(n, int64(len(b)))
		}
		return n
	}
	typ := s.Type
	if typ == "" && len(s.Types) > 0 {
		typ = s.Types[0]
	}
	switch typ {
	case "string":
		if s.MaxLength == nil {
			*unbounded = cmp.Or(*unbounded, path)
			return -1
		}
		return int64(*s.MaxLength) + 2
	case "integer", "number":
		return 24
	case "boolean":
		return 5
	case "array":
		item := maxJSONBytes(s.Items, path+"[]", unbounded)
		if s.MaxItems == nil || item < 0 {
			*unbounded = cmp.Or(*unbounded, path)
			return -1
		}
		return 2 + int64(*s.MaxItems)*(item+1)
	case "object":
		n := int64(2)
		for name, p := range s.Properties {
			v := maxJSONBytes(p, path+"."+name, unbounded)
			if v < 0 {
				return -1
			}
			n += int64(len(name)) + 4 + v
		}
		if ap := s.AdditionalProperties; ap != nil && !isFalse(ap) {
			key := maxJSONBytes(s.PropertyNames, path+"{key}", unbounded)
			v := maxJSONBytes(ap, path+"{}", unbounded)
			if s.MaxProperties == nil || key < 0 || v < 0 {
				*unbounded = cmp.Or(*unbounded, path)
				return -1
			}
			n += int64(*s.MaxProperties) * (key + 2 + v)
		}
		return n
	}
	*unbounded = cmp.Or(*unbounded, path)
	return -1
}

// maxWithTotal is maxJSONBytes of s whose array property field holds
// objects whose string property part is bounded in all, across the array's
// items, to total characters: a bound of the domain that JSON Schema cannot
// express.
func maxWithTotal(s *jsonschema.Schema, field, part string, total int64) int64 {
	var unbounded string
	rest := *s
	rest.Properties = maps.Clone(s.Properties)
	delete(rest.Properties, field)
	arr := s.Properties[field]
	item := *arr.Items
	item.Properties = maps.Clone(item.Properties)
	delete(item.Properties, part)
	perItem := maxJSONBytes(&item, "", &unbounded) + int64(len(part)) + 6
	return maxJSONBytes(&rest, "", &unbounded) + int64(len(field)) + 4 + 2 + int64(*arr.MaxItems)*(perItem+1) + total
}

func isFalse(s *jsonschema.Schema) bool {
	return s.Not != nil && s.Not.Type == "" && len(s.Not.Types) == 0
}

// TestEveryToolsLargestArgumentsFitItsRequestLimit checks that what a schema
// allows, the gateway accepts: the largest arguments of every tool whose
// schema bounds them, in a tools/call request, are within the tool's request
// body limit, and that limit reaches the deployed gateway function.
func TestEveryToolsLargestArgumentsFitItsRequestLimit(t *testing.T) {
	for _, tool := range catalog.Default().Tools() {
		t.Run(tool.Name, func(t *testing.T) {
			var unbounded string
			input, _ := schemas(t, tool)
			args := maxJSONBytes(input, "arguments", &unbounded)
			if tool.Name == "memory_get_or_create_summary" {
				args = maxWithTotal(input, "old_messages", "content", memory.MaxOldMessagesChars)
			}
			if args < 0 {
				t.Skipf("the schema bounds no size of %s; the domain bounds it", unbounded)
			}
			if need := catalog.RequestBytesFor(args); need > tool.RequestBytes() {
				t.Errorf("arguments may take %d bytes, so a call %d; the tool accepts requests of %d", args, need, tool.RequestBytes())
			}
			if tool.RequestBytes() > catalog.MaxRequestBytes {
				t.Errorf("limit %d is more than the deployed gateway can receive, %d", tool.RequestBytes(), catalog.MaxRequestBytes)
			}
			t.Logf("largest arguments %d bytes; request limit %d", args, tool.RequestBytes())
		})
	}
}

// TestTheLargestRequestFitsLambdasPayload builds the event API Gateway sends
// for the largest request body any tool accepts, base64-encoded with
// headers at the HTTP API's limit, and checks it fits a synchronous Lambda
// invocation and the HTTP API's payload limit.
func TestTheLargestRequestFitsLambdasPayload(t *testing.T) {
	body := strings.Repeat("x", int(catalog.Default().MaxRequestBytes()))
	ev := events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: "POST /mcp", RawPath: "/mcp",
		Headers:         map[string]string{"authorization": "Bearer sb_" + strings.Repeat("k", 64), "x-padding": strings.Repeat("h", 10<<10)},
		Body:            base64.StdEncoding.EncodeToString([]byte(body)),
		IsBase64Encoded: true,
	}
	ev.RequestContext.HTTP.Method, ev.RequestContext.HTTP.Path = "POST", "/mcp"
	ev.RequestContext.HTTP.UserAgent = strings.Repeat("u", 512)
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > catalog.LambdaPayloadBytes || len(body) > catalog.HTTPAPIPayloadBytes {
		t.Errorf("a %d-byte body makes a %d-byte event; Lambda takes %d", len(body), len(b), catalog.LambdaPayloadBytes)
	}
}

package invoke

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/switchboard-dev/switchboard/shared/rawjson"
)

// Encode returns the JSON payload of req, as every invoker sends it. It does
// not HTML-escape, so arguments reach the function as the client sent them
// (compacted). It writes exactly what [Marshal] gives, field by field rather
// than by reflection, since every call encodes one; envelope_test.go keeps
// the two equal for every field of [Request].
func Encode(req *Request) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(160 + len(req.Method) + len(req.Tool) + len(req.Arguments) + len(req.URI) + len(req.Cursor) +
		len(req.Caller.Tenant) + len(req.Caller.Principal) + len(req.RequestID) + len(req.TraceID) + len(req.ProtocolVersion) + len(req.Thread))
	field := func(name, value string, omitEmpty bool) {
		if value == "" && omitEmpty {
			return
		}
		buf.WriteString(name)
		buf.Write(rawjson.AppendString(buf.AvailableBuffer(), value))
	}
	field(`{"method":`, req.Method, false)
	field(`,"tool":`, req.Tool, true)
	if len(req.Arguments) > 0 {
		buf.WriteString(`,"arguments":`)
		if json.Compact(&buf, req.Arguments) != nil { // as encoding/json compacts a RawMessage
			return encodeByReflection(req) // for its error
		}
	}
	field(`,"uri":`, req.URI, true)
	field(`,"cursor":`, req.Cursor, true)
	field(`,"caller":{"tenant":`, req.Caller.Tenant, false)
	field(`,"principal":`, req.Caller.Principal, false)
	if len(req.Caller.Scopes) > 0 {
		buf.WriteString(`,"scopes":[`)
		for i, s := range req.Caller.Scopes {
			if i > 0 {
				buf.WriteByte(',')
			}
			buf.Write(rawjson.AppendString(buf.AvailableBuffer(), s))
		}
		buf.WriteByte(']')
	}
	field(`},"request_id":`, req.RequestID, false)
	field(`,"trace_id":`, req.TraceID, false)
	field(`,"protocol_version":`, req.ProtocolVersion, true)
	if req.Input != nil { // rare, and of many types: by reflection
		buf.WriteString(`,"input":`)
		if MarshalTo(&buf, req.Input) != nil {
			return encodeByReflection(req) // for its error
		}
	}
	if req.Stream {
		buf.WriteString(`,"stream":true`)
	}
	field(`,"thread":`, req.Thread, true)
	if req.Profile != nil { // only for the functions that call tools: by reflection
		buf.WriteString(`,"profile":`)
		if MarshalTo(&buf, req.Profile) != nil {
			return encodeByReflection(req) // for its error
		}
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

func encodeByReflection(req *Request) ([]byte, error) {
	b, err := Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("invoke: encoding request: %w", err)
	}
	return b, nil
}

// Decode decodes a request payload, as json.Unmarshal into a [Request]
// does. A payload in the form [Encode] writes is read with rawjson, without
// reflection; any other goes to json.Unmarshal.
func Decode(payload []byte) (Request, error) {
	var req Request
	if decodeRequestQuickly(payload, &req) {
		return req, nil
	}
	req = Request{}
	err := json.Unmarshal(payload, &req)
	return req, err
}

// decodeRequestQuickly reads a payload whose keys are Request's, each once
// and in its exact spelling, with no null values: then it reads as
// json.Unmarshal reads it. It reports false for anything else.
func decodeRequestQuickly(payload []byte, req *Request) bool {
	s := &rawjson.Scanner{Data: payload}
	str := func(dst *string) bool {
		raw, escaped, ok := s.String()
		if !ok {
			return false
		}
		if !escaped {
			*dst = string(raw[1 : len(raw)-1])
			return true
		}
		return json.Unmarshal(raw, dst) == nil
	}
	caller := func(key []byte) bool {
		switch string(key) {
		case "tenant":
			return str(&req.Caller.Tenant)
		case "principal":
			return str(&req.Caller.Principal)
		case "scopes":
			scopes := []string{}
			ok := s.Array(func() bool {
				var v string
				scopes = append(scopes, v)
				return str(&scopes[len(scopes)-1])
			})
			req.Caller.Scopes = scopes
			return ok
		}
		return false
	}
	ok := s.Object(func(key []byte) bool {
		switch string(key) {
		case "method":
			return str(&req.Method)
		case "tool":
			return str(&req.Tool)
		case "arguments":
			if s.Peek() == 'n' {
				return false
			}
			start := s.Pos
			if !s.Value() {
				return false
			}
			req.Arguments = bytes.Clone(payload[start:s.Pos])
			return true
		case "uri":
			return str(&req.URI)
		case "cursor":
			return str(&req.Cursor)
		case "caller":
			return s.Peek() == '{' && s.Object(caller)
		case "request_id":
			return str(&req.RequestID)
		case "trace_id":
			return str(&req.TraceID)
		case "protocol_version":
			return str(&req.ProtocolVersion)
		case "input":
			start := s.Pos
			if s.Peek() == 'n' || !s.Value() {
				return false
			}
			return json.Unmarshal(payload[start:s.Pos], &req.Input) == nil
		case "stream":
			req.Stream = s.Peek() == 't'
			return s.Literal("true") || s.Literal("false")
		case "thread":
			return str(&req.Thread)
		case "profile":
			start := s.Pos
			if s.Peek() == 'n' || !s.Value() {
				return false
			}
			return json.Unmarshal(payload[start:s.Pos], &req.Profile) == nil
		}
		return false
	})
	return ok && s.AtEnd()
}

package memory

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/switchboard-dev/switchboard/shared/rawjson"
)

// AppendJSON appends o's JSON exactly as encoding/json writes it with HTML
// escaping off, as [invoke.MarshalTo] does, without reflection:
// memory_get_context answers every turn of a chat, and encoding its answer
// was the largest part of its function's own work. json_test.go holds it
// to encoding/json's answer for every field.
func (o GetContextOutput) AppendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"conversation_id":`...)
	b = rawjson.AppendString(b, o.ConversationID)
	b = append(b, `,"summary":`...)
	b = rawjson.AppendString(b, o.Summary)
	b = append(b, `,"summarized_through":`...)
	b = strconv.AppendInt(b, o.Through, 10)
	b = append(b, `,"messages":`...)
	if o.Messages == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range o.Messages {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = o.Messages[i].appendJSON(b); err != nil {
				return b, err
			}
		}
		b = append(b, ']')
	}
	b = append(b, `,"omitted":`...)
	b = strconv.AppendInt(b, o.Omitted, 10)
	return append(b, '}'), nil
}

// appendJSON appends m's JSON as encoding/json writes it with HTML escaping
// off.
func (m *Message) appendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"seq":`...)
	b = strconv.AppendInt(b, m.Seq, 10)
	b = append(b, `,"role":`...)
	b = rawjson.AppendString(b, m.Role)
	b = append(b, `,"content":`...)
	b = rawjson.AppendString(b, m.Content)
	b = append(b, `,"created_at":"`...)
	b, err := m.CreatedAt.AppendText(b) // what time.Time's MarshalJSON quotes
	if err != nil {
		return b, fmt.Errorf("encoding message %d: %w", m.Seq, err)
	}
	b = append(b, '"')
	if len(m.ToolCalls) > 0 {
		// encoding/json checks and compacts a json.RawMessage.
		buf := bytes.NewBuffer(append(b, `,"tool_calls":`...))
		if err := json.Compact(buf, m.ToolCalls); err != nil {
			return b, fmt.Errorf("encoding message %d: tool_calls: %w", m.Seq, err)
		}
		b = buf.Bytes()
	}
	if m.ToolCallID != "" {
		b = append(b, `,"tool_call_id":`...)
		b = rawjson.AppendString(b, m.ToolCallID)
	}
	if m.Name != "" {
		b = append(b, `,"name":`...)
		b = rawjson.AppendString(b, m.Name)
	}
	if m.Internal {
		b = append(b, `,"internal":true`...)
	}
	return append(b, '}'), nil
}

package invoke

import (
	"bytes"
	"encoding/json"
	"sync"

	"github.com/switchboard-dev/switchboard/shared/rawjson"
)

// decodeQuickly decodes a response written by [EncodeResponse]:
// {"result":…} with the error and notifications, if any, after the result.
// It finds where the result ends with rawjson instead of decoding it (the
// result can be large, and its consumer decodes it anyway), and decodes
// only the rest. It reports false for any other form, which json.Unmarshal
// then decodes; when it reports true, resp is what json.Unmarshal gives.
func decodeQuickly(b []byte, resp *Response) bool {
	rest, ok := bytes.CutPrefix(b, []byte(`{"result":`))
	if !ok {
		return false
	}
	s := &rawjson.Scanner{Data: rest}
	if s.Peek() == 'n' { // null: left to json.Unmarshal
		return false
	}
	start := s.Pos
	if !s.Value() {
		return false
	}
	result, tail := rest[start:s.Pos], rest[s.Pos:]
	if string(tail) != "}" {
		if len(tail) < 2 || tail[0] != ',' || !bytes.HasPrefix(bytes.TrimLeft(tail[1:], " \t\r\n"), []byte(`"`)) {
			return false
		}
		// The rest are Response's other fields, decoded as they are.
		var t struct {
			Response
			Twice json.RawMessage `json:"result"` // the result twice: left to json.Unmarshal
		}
		if json.Unmarshal(append([]byte{'{'}, tail[1:]...), &t) != nil || t.Twice != nil {
			return false
		}
		*resp = t.Response
	}
	resp.Result = result
	return true
}

// ReleasePayload gives back a payload that [RawInvoker.InvokeRaw] returned,
// once its caller needs neither it nor anything read from it without a copy
// (such as a Response that [DecodeResponse] made of it): [EncodeResponse]
// may write another payload over it. Only the caller of InvokeRaw may, and
// only once.
func ReleasePayload(b []byte) {
	if b = b[:0]; cap(b) <= maxReused {
		payloads.Put(&b)
	}
}

// payloads hold released payloads (*[]byte) for EncodeResponse.
var payloads = sync.Pool{New: func() any { return new([]byte) }}

// maxReused is the largest payload kept for reuse: a rare large one does not
// stay held.
const maxReused = 1 << 20

// reusedPayload returns an empty buffer of at least size bytes, a released
// payload's if one is at hand.
func reusedPayload(size int) []byte {
	if b := *payloads.Get().(*[]byte); cap(b) >= size {
		return b
	}
	return make([]byte, 0, size)
}

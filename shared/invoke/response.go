package invoke

import (
	"bytes"
	"encoding/json"

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
		var t struct {
			Result        json.RawMessage `json:"result"` // twice: left to json.Unmarshal
			Error         *Error          `json:"error"`
			Notifications []Notification  `json:"notifications"`
		}
		if json.Unmarshal(append([]byte{'{'}, tail[1:]...), &t) != nil || t.Result != nil {
			return false
		}
		resp.Error, resp.Notifications = t.Error, t.Notifications
	}
	resp.Result = result
	return true
}

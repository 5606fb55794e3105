package invoke

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/google/go-cmp/cmp"
)

var responses = []string{
	`{"result":{"content":[{"type":"text","text":"x"}]}}`,
	`{"result":{"a":"<é>"},"error":{"kind":"not_found","message":"no"}}`,
	`{"result":[1,2],"notifications":[{"level":"info","data":{"x":1}},{"progress":0.5,"total":2}]}`,
	`{"result":{"a":1},"error":{"kind":"internal","message":"m"},"notifications":[{"message":"m"}]}`,
	`{"result":null,"error":{"kind":"internal","message":"m"}}`,
	`{"result":{"a":1},"result":{"b":2}}`,
	`{"result":{"a":1},"Result":{"b":2}}`,
	`{"result":{"a":1},"other":true}`,
	`{"result":{"a":1}`,
	`{"result":{"a":1}}x`,
	`{"result":{"a":"` + "\xff" + `"}}`,
	`{"error":{"kind":"internal","message":"m"},"result":{"a":1}}`,
	` {"result":{"a":1}}`,
	`{"result":{"a":1},"error":{"kind":5}}`,
	`{"result":{"content":[]},"input_required":{"requests":{"a":{"method":"elicitation/create","params":{"message":"sure?"}}},"state":"e30="}}`,
}

func TestDecodingQuicklyGivesWhatJSONUnmarshalGives(t *testing.T) {
	quick := 0
	for _, r := range responses {
		if check(t, r) {
			quick++
		}
	}
	if quick < 4 {
		t.Errorf("only %d responses decoded quickly", quick)
	}
}

func FuzzDecodeQuickly(f *testing.F) {
	for _, r := range responses {
		f.Add(r)
	}
	f.Fuzz(func(t *testing.T, r string) { check(t, r) })
}

func check(t *testing.T, payload string) bool {
	t.Helper()
	var quick, want Response
	if !decodeQuickly([]byte(payload), &quick) {
		return false
	}
	if err := json.Unmarshal([]byte(payload), &want); err != nil {
		t.Errorf("decoded %s quickly; json.Unmarshal fails: %v", payload, err)
		return true
	}
	if diff := cmp.Diff(want, quick); diff != "" {
		t.Errorf("decoding %s quickly differs (-json.Unmarshal +quickly):\n%s", payload, diff)
	}
	return true
}

// TestLocalKeepsNoPayloadAHandlerReuses: aws-lambda-go's handlers answer
// from a buffer the next call writes into, so a response must not share it.
func TestLocalKeepsNoPayloadAHandlerReuses(t *testing.T) {
	h := lambda.NewHandler(func(_ context.Context, req Request) (Response, error) {
		return Response{Result: json.RawMessage(`{"tool":"` + req.Tool + `"}`)}, nil
	})
	l := NewLocal(map[string]lambda.Handler{"f": h}, nil)
	first, err := l.Invoke(context.Background(), "f", &Request{Tool: "first"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Invoke(context.Background(), "f", &Request{Tool: "other"}); err != nil {
		t.Fatal(err)
	}
	if string(first.Result) != `{"tool":"first"}` {
		t.Errorf("the first response's result became %s", first.Result)
	}
}

package dynamo

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/store"
)

func TestAnItemsAttributesAreWrittenInDynamoDBsJSON(t *testing.T) {
	tests := []struct {
		name  string
		value any
		want  string
	}{
		{"a string", "héllo \"x\"", `{"S":"héllo \"x\""}`},
		{"an int64", int64(-9007199254740993), `{"N":"-9007199254740993"}`},
		{"an int", 42, `{"N":"42"}`},
		{"a boolean false", false, `{"BOOL":false}`},
		{"a binary value, in base64", []byte{0, 0xff, 'a'}, `{"B":"AP9h"}`},
		{"an empty binary value, not a missing one", []byte(nil), `{"B":""}`},
		{"an empty string", "", `{"S":""}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			it := store.Item{PK: "p", SK: "s", Attrs: store.Attrs{"a": tc.value}}
			b, err := json.Marshal(marshalItem(it)["a"])
			if err != nil || string(b) != tc.want {
				t.Errorf("marshal %#v = %s, %v; want %s", tc.value, b, err, tc.want)
			}
		})
	}
	it := store.Item{PK: "p", SK: "s", ExpiresAt: time.Unix(1700000000, 0)}
	if b, _ := json.Marshal(marshalItem(it)); string(b) != `{"expires_at":{"N":"1700000000"},"pk":{"S":"p"},"sk":{"S":"s"}}` {
		t.Errorf("an item with only keys and an expiry = %s", b)
	}
}

func TestAnItemReadFromDynamoDBsJSONHoldsItsValues(t *testing.T) {
	const answer = `{"pk":{"S":"p"},"sk":{"S":"s"},"expires_at":{"N":"1700000000"},
		"s":{"S":"x"},"n":{"N":"-7"},"b":{"B":"AP9h"},"e":{"B":""},"t":{"BOOL":true}}`
	var av attrs
	if err := json.Unmarshal([]byte(answer), &av); err != nil {
		t.Fatal(err)
	}
	it, err := unmarshalItem(av)
	if err != nil {
		t.Fatal(err)
	}
	want := store.Item{PK: "p", SK: "s", ExpiresAt: time.Unix(1700000000, 0),
		Attrs: store.Attrs{"s": "x", "n": int64(-7), "b": []byte{0, 0xff, 'a'}, "e": []byte{}, "t": true}}
	if !reflect.DeepEqual(it, want) {
		t.Errorf("item = %#v, want %#v", it, want)
	}
}

func TestAnItemWithAValueAStoredItemCannotHoldIsRefused(t *testing.T) {
	for name, value := range map[string]string{
		"a fraction":                  `{"N":"1.5"}`,
		"a number beyond int64":       `{"N":"9223372036854775808"}`,
		"a null":                      `{"NULL":true}`,
		"a string set":                `{"SS":["a"]}`,
		"a map":                       `{"M":{"x":{"S":"y"}}}`,
		"a list":                      `{"L":[]}`,
		"two types at once":           `{"S":"a","N":"1"}`,
		"an expiry that is no number": `{"S":"1700000000"}`,
	} {
		t.Run(name, func(t *testing.T) {
			attr := "x"
			if name == "an expiry that is no number" {
				attr = store.AttrExpiresAt
			}
			var av attrs
			if err := json.Unmarshal([]byte(`{"pk":{"S":"p"},"sk":{"S":"s"},"`+attr+`":`+value+`}`), &av); err != nil {
				t.Fatal(err)
			}
			if it, err := unmarshalItem(av); err == nil {
				t.Errorf("unmarshalItem = %+v, want an error", it)
			}
		})
	}
	for name, answer := range map[string]string{
		"no partition key":           `{"sk":{"S":"s"}}`,
		"a partition key of numbers": `{"pk":{"N":"1"},"sk":{"S":"s"}}`,
		"no sort key":                `{"pk":{"S":"p"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			var av attrs
			if err := json.Unmarshal([]byte(answer), &av); err != nil {
				t.Fatal(err)
			}
			if it, err := unmarshalItem(av); err == nil {
				t.Errorf("unmarshalItem = %+v, want an error", it)
			}
		})
	}
}

// The calls' bodies, as DynamoDB reads them: a false that matters is sent,
// and a condition that always holds sends no expression, names or values,
// which DynamoDB would refuse as unused.
func TestEachCallSendsDynamoDBsRequest(t *testing.T) {
	f := &fakeDynamoDB{status: 200, answer: `{}`}
	tbl := f.open(t)
	ctx := t.Context()
	tbl.Get(ctx, "p", "s")
	tbl.Put(ctx, store.Item{PK: "p", SK: "s"}, store.Condition{})
	tbl.Delete(ctx, "p", "s", store.IfExists())
	tbl.Query(ctx, "p", store.Query{Prefix: "a#", Reverse: true, Limit: 5})
	want := []struct {
		target string
		body   string
	}{
		{"DynamoDB_20120810.GetItem", `{"ConsistentRead":true,"Key":{"pk":{"S":"p"},"sk":{"S":"s"}},"TableName":"tbl"}`},
		{"DynamoDB_20120810.PutItem", `{"Item":{"pk":{"S":"p"},"sk":{"S":"s"}},"TableName":"tbl"}`},
		{"DynamoDB_20120810.DeleteItem", `{"ConditionExpression":"attribute_exists(#pk) AND (attribute_not_exists(#exp) OR #exp \u003e :now)","ExpressionAttributeNames":{"#exp":"expires_at","#pk":"pk"},"ExpressionAttributeValues":{":now":{"N":"NOW"}},"Key":{"pk":{"S":"p"},"sk":{"S":"s"}},"TableName":"tbl"}`},
		{"DynamoDB_20120810.Query", `{"ConsistentRead":true,"ExpressionAttributeNames":{"#exp":"expires_at","#pk":"pk","#sk":"sk"},"ExpressionAttributeValues":{":now":{"N":"NOW"},":pk":{"S":"p"},":prefix":{"S":"a#"}},"FilterExpression":"attribute_not_exists(#exp) OR #exp \u003e :now","KeyConditionExpression":"#pk = :pk AND begins_with(#sk, :prefix)","Limit":6,"ScanIndexForward":false,"TableName":"tbl"}`},
	}
	if len(f.calls) != len(want) {
		t.Fatalf("calls %q, want %d", f.calls, len(want))
	}
	for i, w := range want {
		if vals, ok := f.bodies[i]["ExpressionAttributeValues"].(map[string]any); ok {
			vals[":now"] = map[string]any{"N": "NOW"}
		}
		b, _ := json.Marshal(f.bodies[i])
		if f.calls[i] != w.target || string(b) != w.body {
			t.Errorf("call %d: %s %s\nwant %s %s", i, f.calls[i], b, w.target, w.body)
		}
	}
}

// TestTheLongestItemsJSONFitsItsBound builds the item whose JSON is longest
// for its size as the store counts it, one of the most attributes with
// names of control characters (escaped six bytes each), as short as they can
// be while distinct, and empty values, and checks that GetItem's answer
// carrying it is under the bound awsjson reads it with.
func TestTheLongestItemsJSONFitsItsBound(t *testing.T) {
	it := store.Item{PK: "p", SK: "s", Attrs: store.Attrs{}}
	size := len(store.AttrPK) + len(it.PK) + len(store.AttrSK) + len(it.SK)
	name := []byte{0}
	for size+len(name) <= store.MaxItemBytes {
		if _, taken := it.Attrs[string(name)]; !taken && string(name) != store.AttrPK && string(name) != store.AttrSK {
			it.Attrs[string(name)] = ""
			size += len(name)
		}
		name = nextName(name)
	}
	if _, err := store.ValidateItem(it); err != nil {
		t.Fatalf("the item is not one the store accepts: %v", err)
	}
	answer, err := json.Marshal(struct{ Item attrs }{marshalItem(it)})
	if err != nil {
		t.Fatal(err)
	}
	if len(answer) > maxItemAnswer {
		t.Errorf("an item of %d bytes (%d attributes) is %d bytes of JSON, over the %d bytes GetItem's answer is read with", size, len(it.Attrs), len(answer), maxItemAnswer)
	}
	t.Logf("%d attributes, %d bytes counted, %d bytes of JSON (%.1fx)", len(it.Attrs), size, len(answer), float64(len(answer))/float64(size))
}

// nextName counts through names of the 32 control characters, shortest first.
func nextName(name []byte) []byte {
	for i := len(name) - 1; i >= 0; i-- {
		if name[i] < 0x1f {
			name[i]++
			return name
		}
		name[i] = 0
	}
	return make([]byte, len(name)+1)
}

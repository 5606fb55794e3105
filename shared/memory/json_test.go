package memory_test

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/memory"
)

// AppendJSON must write what invoke.Marshal writes by reflection for
// any value: every field of the output and of its messages is filled with
// awkward values, so that a field added to either type and not to
// AppendJSON, or a string escaped differently, fails here.
func TestAppendJSONWritesWhatEncodingJSONWrites(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		var out memory.GetContextOutput
		fill(t, rng, reflect.ValueOf(&out).Elem())
		if i%50 == 0 {
			out.Messages = nil
		}
		want, wantErr := invoke.Marshal(reflected(out)) // the type without AppendJSON
		got, err := out.AppendJSON([]byte("prefix"))
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("AppendJSON(%+v) error %v, encoding/json's %v", out, err, wantErr)
		}
		if err == nil && string(got) != "prefix"+string(want) {
			t.Fatalf("AppendJSON(%+v) =\n%s\nencoding/json writes\n%s", out, got[len("prefix"):], want)
		}
	}
}

// reflected is GetContextOutput without its methods, which encoding/json
// encodes by reflection.
type reflected memory.GetContextOutput

var (
	awkwardStrings = []string{"", "plain", `<a href="x">&amp;</a>`, "line\u2028and\u2029para", "ctl\x00\x01\x1f\t\n\r\b\f",
		"bad \xff\xfe utf-8", "tooth 🦷 brosse à dents", `back\slash "quoted"`, "del\x7f", "\xe2\x80"}
	awkwardJSON = []string{"", `[{"id":"c1","name":"memory_get_context","arguments":{"a":1}}]`, "[ 1 ,\n 2 ]",
		`{"x":"<b>&\u2028</b>","y":[true,false,null,-1.5e3]}`, "[", `{"a":}`}
	awkwardTimes = []time.Time{{}, time.Date(2026, 11, 26, 7, 49, 57, 527116117, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("", 3600)), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}
)

// fill sets v, and everything in it, to awkward values.
func fill(t *testing.T, rng *rand.Rand, v reflect.Value) {
	switch {
	case v.Type() == reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(awkwardTimes[rng.IntN(len(awkwardTimes))]))
	case v.Type() == reflect.TypeFor[json.RawMessage]():
		v.SetBytes([]byte(awkwardJSON[rng.IntN(len(awkwardJSON))]))
	case v.Kind() == reflect.Struct:
		for i := range v.NumField() {
			fill(t, rng, v.Field(i))
		}
	case v.Kind() == reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), rng.IntN(4), 4))
		for i := range v.Len() {
			fill(t, rng, v.Index(i))
		}
	case v.Kind() == reflect.String:
		v.SetString(awkwardStrings[rng.IntN(len(awkwardStrings))])
	case v.Kind() == reflect.Int64:
		v.SetInt([]int64{0, 1, -7, 1 << 62}[rng.IntN(4)])
	case v.Kind() == reflect.Bool:
		v.SetBool(rng.IntN(2) == 0)
	default:
		t.Fatalf("fill has no awkward values of %s: add some", v.Type())
	}
}

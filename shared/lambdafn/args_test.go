package lambdafn

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/memory"
)

// flatInput has a field of every kind flatArgs decodes.
type flatInput struct {
	Name    string  `json:"name"`
	Limit   int     `json:"limit,omitempty"`
	Small   int8    `json:"small"`
	Count   uint16  `json:"count"`
	Score   float64 `json:"score"`
	Ratio   float32 `json:"ratio"`
	On      bool    `json:"on"`
	Untaged string
	Skipped string `json:"-"`
	hidden  string
}

func TestFlatArgsDecodesAsEncodingJSONDoes(t *testing.T) {
	d := newFlatArgs(reflect.TypeFor[flatInput]())
	if d == nil {
		t.Fatal("flatInput is not decoded flat")
	}
	for _, tc := range []struct {
		name string
		args string
		flat bool // flatArgs decodes it rather than leaving it to encoding/json
	}{
		{"every field", `{"name":"a b <c> & d","limit":7,"small":-128,"count":65535,"score":1.5e3,"ratio":0.25,"on":true,"Untaged":"x"}`, true},
		{"no field", `{}`, true},
		{"white space", " {\n\t\"name\" : \"x\" , \"on\" : false } ", true},
		{"a key twice", `{"name":"a","name":"b"}`, false},
		{"a key in other case", `{"Name":"a"}`, false},
		{"an unknown key", `{"other":1}`, false},
		{"the skipped field's name", `{"Skipped":"x"}`, false},
		{"an unexported field's name", `{"hidden":"x"}`, false},
		{"an escaped string", `{"name":"a\"b"}`, false},
		{"a unicode string", `{"name":"café ☕"}`, true},
		{"null", `{"name":null}`, false},
		{"an int that overflows", `{"small":128}`, false},
		{"a fraction for an int", `{"limit":1.5}`, false},
		{"an exponent for an int", `{"limit":1e2}`, false},
		{"a negative unsigned", `{"count":-1}`, false},
		{"a float32 that overflows", `{"ratio":1e39}`, false},
		{"a string for a number", `{"limit":"7"}`, false},
		{"a number for a string", `{"name":7}`, false},
		{"a string for a bool", `{"on":"true"}`, false},
		{"trailing text", `{"name":"a"}x`, false},
		{"not an object", `["name"]`, false},
		{"truncated", `{"name":"a"`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got, want flatInput
			ok := d.decode([]byte(tc.args), reflect.ValueOf(&got).Elem())
			if ok != tc.flat {
				t.Fatalf("decode(%s) = %v, want %v", tc.args, ok, tc.flat)
			}
			if !ok {
				return
			}
			if got.hidden != "" {
				t.Errorf("decode(%s) set an unexported field", tc.args)
			}
			if err := json.Unmarshal([]byte(tc.args), &want); err != nil {
				t.Fatalf("encoding/json refuses %s: %v", tc.args, err)
			}
			if got != want {
				t.Errorf("decode(%s) = %+v, encoding/json %+v", tc.args, got, want)
			}
		})
	}
}

// textTime decodes itself from text, as encoding/json lets it.
type textTime string

func (t *textTime) UnmarshalText(b []byte) error { *t = textTime("parsed " + string(b)); return nil }

func TestFlatArgsTakesOnlyStructsOfPlainFields(t *testing.T) {
	for _, tc := range []struct {
		name string
		typ  reflect.Type
		flat bool
	}{
		{"memory_get_context's input", reflect.TypeFor[memory.GetContextInput](), true},
		{"a struct of plain fields", reflect.TypeFor[flatInput](), true},
		{"a map", reflect.TypeFor[map[string]any](), false},
		{"a slice field", reflect.TypeFor[struct{ IDs []string }](), false},
		{"a pointer field", reflect.TypeFor[struct{ Limit *int }](), false},
		{"a struct field", reflect.TypeFor[struct{ At time.Time }](), false},
		{"a field that decodes itself", reflect.TypeFor[struct{ At textTime }](), false},
		{"a field decoded from a string", reflect.TypeFor[struct {
			N int `json:"n,string"`
		}](), false},
		{"an embedded struct", reflect.TypeFor[struct{ flatInput }](), false},
		{"a field named as another's tag", reflect.TypeFor[struct {
			A string `json:"B"`
			B string
		}](), false},
		{"a name encoding/json reads otherwise", reflect.TypeFor[struct {
			A string `json:"a-b"`
		}](), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := newFlatArgs(tc.typ) != nil; got != tc.flat {
				t.Errorf("newFlatArgs(%v) decodes flat: %v, want %v", tc.typ, got, tc.flat)
			}
		})
	}
}

func FuzzFlatArgs(f *testing.F) {
	for _, s := range []string{`{"name":"a","limit":7,"on":true}`, `{"small":127,"count":1,"score":-0.5e-3}`, `{"ratio":3.4e38}`, `{}`} {
		f.Add(s)
	}
	d := newFlatArgs(reflect.TypeFor[flatInput]())
	f.Fuzz(func(t *testing.T, args string) {
		var got, want flatInput
		if !d.decode([]byte(args), reflect.ValueOf(&got).Elem()) {
			return
		}
		if err := json.Unmarshal([]byte(args), &want); err != nil {
			t.Fatalf("decoded %q, which encoding/json refuses: %v", args, err)
		}
		if got != want {
			t.Fatalf("decode(%q) = %+v, encoding/json %+v", args, got, want)
		}
	})
}

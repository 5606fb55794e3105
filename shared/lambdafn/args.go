package lambdafn

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/rawjson"
)

// flatArgs decodes a tool's arguments into its input type when that is a
// struct of plain fields (strings, booleans, numbers), as encoding/json
// would, reading them once with rawjson instead of encoding/json's
// validating scan and reflective walk: most tools take such inputs, and
// decoding them was a tenth of a small tool's own work. It accepts only
// what it decodes exactly as encoding/json does (keys spelt as the fields'
// names, strings without escapes, numbers that fit), and reports anything
// else, which encoding/json then decodes or refuses.
type flatArgs struct {
	fields map[string]flatField // by JSON name
}

// flatField is a field of the input struct.
type flatField struct {
	index int
	kind  reflect.Kind
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// newFlatArgs returns the decoder of t's arguments, or nil if t is not a
// struct of plain fields that encoding/json decodes as flatArgs does.
func newFlatArgs(t reflect.Type) *flatArgs {
	if t.Kind() != reflect.Struct || decodesItself(t) {
		return nil
	}
	d := &flatArgs{fields: map[string]flatField{}}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			return nil // embedded fields' promotion rules are encoding/json's
		}
		if !f.IsExported() {
			continue // never decoded
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if opts != "" && opts != "omitempty" && opts != "omitzero" || !plainName(name) {
			return nil // ,string and names encoding/json reads otherwise
		}
		if name == "" {
			name = f.Name
		}
		switch f.Type.Kind() {
		case reflect.String, reflect.Bool, reflect.Float32, reflect.Float64,
			reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		default:
			return nil
		}
		if _, dup := d.fields[name]; dup || decodesItself(f.Type) {
			return nil
		}
		d.fields[name] = flatField{index: i, kind: f.Type.Kind()}
	}
	return d
}

// decodesItself reports whether encoding/json would let t (or *t) decode
// itself.
func decodesItself(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return t.Implements(jsonUnmarshaler) || t.Implements(textUnmarshaler) || p.Implements(jsonUnmarshaler) || p.Implements(textUnmarshaler)
}

// plainName reports whether a tag's name is one encoding/json takes as
// written (or empty, for the field's name).
func plainName(name string) bool {
	for _, c := range name {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// decode decodes args into v, the zero value of the struct d is for, and
// reports whether it did; if not, v may hold part of the arguments.
func (d *flatArgs) decode(args []byte, v reflect.Value) bool {
	s := &rawjson.Scanner{Data: args}
	return s.Object(func(key []byte) bool {
		f, ok := d.fields[string(key)]
		if !ok {
			return false // unknown, or known under another spelling: encoding/json's
		}
		fv := v.Field(f.index)
		switch f.kind {
		case reflect.String:
			raw, escaped, ok := s.String()
			if !ok || escaped {
				return false
			}
			fv.SetString(string(raw[1 : len(raw)-1]))
		case reflect.Bool:
			switch {
			case s.Literal("true"):
				fv.SetBool(true)
			case s.Literal("false"):
				fv.SetBool(false)
			default:
				return false
			}
		case reflect.Float32, reflect.Float64:
			n, ok := s.Number()
			if !ok {
				return false
			}
			x, err := strconv.ParseFloat(string(n), fv.Type().Bits())
			if err != nil || fv.OverflowFloat(x) {
				return false
			}
			fv.SetFloat(x)
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			n, ok := s.Number()
			if !ok {
				return false
			}
			x, err := strconv.ParseInt(string(n), 10, 64)
			if err != nil || fv.OverflowInt(x) {
				return false
			}
			fv.SetInt(x)
		default: // the unsigned kinds
			n, ok := s.Number()
			if !ok {
				return false
			}
			x, err := strconv.ParseUint(string(n), 10, 64)
			if err != nil || fv.OverflowUint(x) {
				return false
			}
			fv.SetUint(x)
		}
		return true
	}) && s.AtEnd()
}

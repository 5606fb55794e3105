package lambdafn

import (
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard/shared/rawjson"
)

// argsCheck is an input schema compiled for a quick check of a call's raw
// arguments, without decoding them: jsonschema-go validates a decoded value
// by reflection, with big.Rat arithmetic for bounds, at several times the
// cost of the call's own decode. A check answers only "certainly valid";
// anything else (invalid arguments, and valid ones it does not follow) goes
// through the decode and jsonschema-go's validation as before, so that the
// outcome and the error message are jsonschema-go's.
//
// It follows the keywords the catalog's schemas use: type (one name),
// properties, required, additionalProperties, propertyNames (of type
// string), items, enum (of strings), pattern, minLength, maxLength,
// minimum, maximum, minItems, maxItems, maxProperties, and the annotations
// title, description and default. A schema with any other keyword compiles
// to nil: no quick check.
type argsCheck struct {
	typ        string // "" for any type
	properties map[string]*argsCheck
	required   []string
	// additional checks properties not in properties; nil allows any.
	additional   *argsCheck
	noAdditional bool
	// names checks every property name; nil allows any.
	names     *argsCheck
	items     *argsCheck
	enum      []string
	pattern   matcher
	minLength int
	maxLength int // -1 for none
	minimum   float64
	maximum   float64
	minItems  int
	maxItems  int // -1 for none
	maxProps  int // -1 for none
}

// compileCheck compiles the JSON schema s, or returns nil if it uses what a
// check does not follow (or is not a JSON object).
func compileCheck(s json.RawMessage) *argsCheck {
	var m map[string]any
	if json.Unmarshal(s, &m) != nil {
		return nil
	}
	c, ok := compileMap(m)
	if !ok {
		return nil
	}
	return c
}

func compileMap(m map[string]any) (*argsCheck, bool) {
	c := &argsCheck{maxLength: -1, minimum: math.Inf(-1), maximum: math.Inf(1), maxItems: -1, maxProps: -1}
	count := func(v any) (int, bool) {
		f, ok := v.(float64)
		return int(f), ok && f >= 0 && f == math.Trunc(f) && f < 1<<31
	}
	for k, v := range m {
		ok := true
		switch k {
		case "title", "description", "default":
		case "type":
			c.typ, ok = v.(string)
			ok = ok && (c.typ == "object" || c.typ == "array" || c.typ == "string" || c.typ == "integer" || c.typ == "number" || c.typ == "boolean")
		case "properties":
			props, isMap := v.(map[string]any)
			ok = isMap
			c.properties = map[string]*argsCheck{}
			for name, p := range props {
				pm, isMap := p.(map[string]any)
				if ok = ok && isMap; ok {
					c.properties[name], ok = compileMap(pm)
				}
				if !ok {
					break
				}
			}
		case "required":
			list, isList := v.([]any)
			ok = isList
			for _, r := range list {
				name, isString := r.(string)
				ok = ok && isString
				c.required = append(c.required, name)
			}
		case "additionalProperties":
			switch v := v.(type) {
			case bool:
				c.noAdditional = !v
			case map[string]any:
				c.additional, ok = compileMap(v)
			default:
				ok = false
			}
		case "items":
			im, isMap := v.(map[string]any)
			if ok = isMap; ok {
				c.items, ok = compileMap(im)
			}
		case "propertyNames":
			nm, isMap := v.(map[string]any)
			if ok = isMap; ok {
				c.names, ok = compileMap(nm)
				ok = ok && c.names.typ == "string"
			}
		case "enum":
			list, isList := v.([]any)
			ok = isList
			for _, e := range list {
				s, isString := e.(string)
				ok = ok && isString
				c.enum = append(c.enum, s)
			}
		case "pattern":
			p, isString := v.(string)
			var err error
			c.pattern, err = compilePattern(p)
			ok = isString && err == nil
		case "minLength":
			c.minLength, ok = count(v)
		case "maxLength":
			c.maxLength, ok = count(v)
		case "minItems":
			c.minItems, ok = count(v)
		case "maxItems":
			c.maxItems, ok = count(v)
		case "maxProperties":
			c.maxProps, ok = count(v)
		case "minimum":
			c.minimum, ok = v.(float64)
		case "maximum":
			c.maximum, ok = v.(float64)
		default:
			ok = false
		}
		if !ok {
			return nil, false
		}
	}
	if c.enum != nil && c.typ != "string" {
		return nil, false
	}
	if c.typ == "" && len(m) > countAnnotations(m) {
		return nil, false // keywords that apply to some types only
	}
	return c, true
}

func countAnnotations(m map[string]any) int {
	n := 0
	for _, k := range []string{"title", "description", "default"} {
		if _, ok := m[k]; ok {
			n++
		}
	}
	return n
}

// certainlyValid reports whether the JSON value args is certainly valid.
func (c *argsCheck) certainlyValid(args []byte) bool {
	s := &rawjson.Scanner{Data: args}
	return c.accepts(s) && s.AtEnd()
}

// accepts reports whether the value at s is certainly valid, consuming it.
func (c *argsCheck) accepts(s *rawjson.Scanner) bool {
	switch c.typ {
	case "":
		return s.Value() // a schema without keywords
	case "object":
		return c.acceptsObject(s)
	case "array":
		n := 0
		ok := s.Array(func() bool {
			n++
			if c.items == nil {
				return s.Value()
			}
			return c.items.accepts(s)
		})
		return ok && n >= c.minItems && (c.maxItems < 0 || n <= c.maxItems)
	case "string":
		return c.acceptsString(s)
	case "integer", "number":
		n, ok := s.Number()
		if !ok {
			return false
		}
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil { // out of range: encoding/json refuses it
			return false
		}
		if _, frac := math.Modf(f); c.typ == "integer" && frac != 0 {
			return false
		}
		return f >= c.minimum && f <= c.maximum
	case "boolean":
		return s.Literal("true") || s.Literal("false")
	}
	return false
}

func (c *argsCheck) acceptsObject(s *rawjson.Scanner) bool {
	if s.Peek() != '{' {
		return false
	}
	var found uint64 // bit i: required[i] seen
	if len(c.required) > 64 {
		return false
	}
	n := 0
	ok := s.Object(func(key []byte) bool {
		n++
		if c.names != nil && !c.names.acceptsText(key) {
			return false
		}
		p, known := c.properties[string(key)]
		if !known {
			switch {
			case c.noAdditional:
				return false
			case c.additional != nil:
				return c.additional.accepts(s)
			}
			return s.Value()
		}
		for i, r := range c.required {
			if r == string(key) {
				found |= 1 << i
			}
		}
		return p.accepts(s)
	})
	return ok && found == 1<<len(c.required)-1 && (c.maxProps < 0 || n <= c.maxProps)
}

func (c *argsCheck) acceptsString(s *rawjson.Scanner) bool {
	raw, escaped, ok := s.String()
	if !ok {
		return false
	}
	if !escaped { // checked where it lies, without a copy
		return c.acceptsText(raw[1 : len(raw)-1])
	}
	var str string
	if json.Unmarshal(raw, &str) != nil {
		return false
	}
	return c.acceptsText([]byte(str))
}

// acceptsText checks the string str against the string keywords.
func (c *argsCheck) acceptsText(str []byte) bool {
	if c.enum != nil && !contains(c.enum, str) {
		return false
	}
	n := utf8.RuneCount(str)
	return n >= c.minLength && (c.maxLength < 0 || n <= c.maxLength) && (c.pattern == nil || c.pattern.Match(str))
}

func contains(list []string, s []byte) bool {
	for _, e := range list {
		if e == string(s) {
			return true
		}
	}
	return false
}

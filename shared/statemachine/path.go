package statemachine

import (
	"fmt"
	"strconv"
	"strings"
)

// path is a JSONPath of the supported subset: $ followed by .name and [index]
// steps. A step is a field name (string) or an array index (int).
type path struct {
	text  string
	steps []any
}

var rootPath = path{text: "$"}

// parsePath parses $, $.a.b, $.a[0], $['a'] and their combinations. Anything
// else (wildcards, filters, slices, recursive descent, the context object $$)
// is refused, so a definition cannot silently mean something else here than
// on AWS.
func parsePath(s string) (path, error) {
	p := path{text: s}
	if strings.HasPrefix(s, "$$") {
		return p, fmt.Errorf("path %q: the context object ($$) is not supported", s)
	}
	if !strings.HasPrefix(s, "$") {
		return p, fmt.Errorf("path %q must start with $", s)
	}
	rest := s[1:]
	for rest != "" {
		switch rest[0] {
		case '.':
			rest = rest[1:]
			end := strings.IndexAny(rest, ".[")
			if end < 0 {
				end = len(rest)
			}
			name := rest[:end]
			if name == "" || strings.ContainsAny(name, "*@?()$'\" ") {
				return p, fmt.Errorf("path %q: unsupported step .%s", s, name)
			}
			p.steps = append(p.steps, name)
			rest = rest[end:]
		case '[':
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return p, fmt.Errorf("path %q: unclosed [", s)
			}
			inner := rest[1:end]
			rest = rest[end+1:]
			if len(inner) >= 2 && inner[0] == '\'' && inner[len(inner)-1] == '\'' {
				p.steps = append(p.steps, inner[1:len(inner)-1])
				continue
			}
			i, err := strconv.Atoi(inner)
			if err != nil || i < 0 {
				return p, fmt.Errorf("path %q: unsupported step [%s] (only [n] and ['name'])", s, inner)
			}
			p.steps = append(p.steps, i)
		default:
			return p, fmt.Errorf("path %q: unexpected %q", s, rest[0])
		}
	}
	return p, nil
}

func (p path) String() string { return p.text }

// lookup returns the value p addresses in v, and whether it exists.
func (p path) lookup(v any) (any, bool) {
	for _, step := range p.steps {
		switch step := step.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil, false
			}
			if v, ok = m[step]; !ok {
				return nil, false
			}
		case int:
			a, ok := v.([]any)
			if !ok || step >= len(a) {
				return nil, false
			}
			v = a[step]
		}
	}
	return v, true
}

// get is lookup that reports a missing value as the States.Runtime error AWS
// raises for it.
func (p path) get(v any) (any, error) {
	got, ok := p.lookup(v)
	if !ok {
		return nil, runtimeErr("the JSONPath %s could not be found in the input", p.text)
	}
	return got, nil
}

// set returns input with value placed at p, as ResultPath does: a copy of
// the objects along the way, with intervening objects created as needed. A
// step through something that is not an object is a
// States.ResultPathMatchFailure.
func (p path) set(input, value any) (any, error) {
	return setSteps(input, p.steps, value, p.text)
}

func setSteps(v any, steps []any, value any, text string) (any, error) {
	if len(steps) == 0 {
		return value, nil
	}
	switch step := steps[0].(type) {
	case string:
		var m map[string]any
		switch v := v.(type) {
		case map[string]any:
			m = make(map[string]any, len(v)+1)
			for k, x := range v {
				m[k] = x
			}
		case nil:
			m = map[string]any{}
		default:
			return nil, &Error{Name: ErrResultPathMatch, Cause: fmt.Sprintf("unable to apply ResultPath %s: the input at .%s is not an object", text, step)}
		}
		child, err := setSteps(m[step], steps[1:], value, text)
		if err != nil {
			return nil, err
		}
		m[step] = child
		return m, nil
	case int:
		a, ok := v.([]any)
		if !ok || step >= len(a) {
			return nil, &Error{Name: ErrResultPathMatch, Cause: fmt.Sprintf("unable to apply ResultPath %s: no array element [%d]", text, step)}
		}
		a = append([]any(nil), a...)
		child, err := setSteps(a[step], steps[1:], value, text)
		if err != nil {
			return nil, err
		}
		a[step] = child
		return a, nil
	}
	panic("unreachable")
}

// Package statemachine runs Amazon States Language (ASL) definitions in
// process, so that the state machine Step Functions deploys is also what runs
// on a laptop and in tests: there is no hand-kept twin of it in Go.
//
// It implements exactly the subset Switchboard's definitions use, with the
// semantics AWS documents, and refuses anything else when parsing:
//
//   - states Pass, Task, Choice, Succeed and Fail;
//   - InputPath, Parameters (keys ending in ".$" take a path), ResultSelector,
//     ResultPath (intervening objects created as needed), OutputPath, Result;
//   - paths $, $.a.b and $.a[0] (no wildcards, filters, context object or
//     intrinsic functions); a path to a missing field is a States.Runtime
//     error, which no Catch catches;
//   - Choice rules with BooleanEquals, StringEquals, NumericEquals, IsPresent,
//     And, Or and Not;
//   - Retry (ErrorEquals, IntervalSeconds, MaxAttempts, BackoffRate), Catch
//     (ErrorEquals, ResultPath, Next), TimeoutSeconds on a Task and on the
//     machine.
//
// [Machine.WorstCase] bounds how long an execution can run, retries
// included, so that callers can check a definition fits their own timeout.
//
// A Task calls the [TaskFunc] given to [Machine.Run] with its Resource and its
// effective parameters; an [*Error] it returns carries the ASL error name
// (States.TaskFailed for any other error, States.Timeout past TimeoutSeconds).
//
//	def, _ := statemachine.Substitute(asl, map[string]string{"FnArn": "arn:..."})
//	m, err := statemachine.Parse(def)
//	out, err := m.Run(ctx, input, statemachine.RunOptions{Task: call})
//	var fail *statemachine.Error
//	if errors.As(err, &fail) { /* the execution failed: fail.Name, fail.Cause */ }
package statemachine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// The error names of the ASL specification this package raises or matches.
const (
	ErrAll             = "States.ALL"
	ErrTaskFailed      = "States.TaskFailed"
	ErrTimeout         = "States.Timeout"
	ErrRuntime         = "States.Runtime"
	ErrNoChoiceMatched = "States.NoChoiceMatched"
	ErrResultPathMatch = "States.ResultPathMatchFailure"
)

// Error is an ASL error: a failed task, a failed execution, or a runtime error
// of the definition itself. Name is the ASL error name that Retry and Catch
// match (a Lambda function's errorType, States.Timeout, ...), Cause the detail.
type Error struct {
	Name  string
	Cause string
}

func (e *Error) Error() string {
	if e.Cause == "" {
		return e.Name
	}
	return e.Name + ": " + e.Cause
}

// at locates err at field of the definition, as "field: err". Field names
// are ASL's, such as Retry[0], so they keep their case.
func at(field string, err error) error {
	return fmt.Errorf("%s: %w", field, err)
}

func runtimeErr(format string, args ...any) *Error {
	return &Error{Name: ErrRuntime, Cause: fmt.Sprintf(format, args...)}
}

// Machine is a parsed state machine. It is immutable and safe for concurrent
// use: each [Machine.Run] is an independent execution.
type Machine struct {
	startAt        string
	timeoutSeconds int
	states         map[string]*state
}

// definition and state mirror the JSON of an ASL document. Fields outside
// this subset make Parse fail (unknown fields are refused).
type definition struct {
	Comment        string                     `json:"Comment"`
	StartAt        string                     `json:"StartAt"`
	TimeoutSeconds int                        `json:"TimeoutSeconds"`
	Version        string                     `json:"Version"`
	States         map[string]json.RawMessage `json:"States"`
}

type state struct {
	name           string
	Type           string            `json:"Type"`
	Comment        string            `json:"Comment"`
	Next           string            `json:"Next"`
	End            bool              `json:"End"`
	InputPath      json.RawMessage   `json:"InputPath"`
	OutputPath     json.RawMessage   `json:"OutputPath"`
	ResultPath     json.RawMessage   `json:"ResultPath"`
	Parameters     json.RawMessage   `json:"Parameters"`
	ResultSelector json.RawMessage   `json:"ResultSelector"`
	Result         json.RawMessage   `json:"Result"`
	Resource       string            `json:"Resource"`
	TimeoutSeconds int               `json:"TimeoutSeconds"`
	Retry          []retrier         `json:"Retry"`
	Catch          []catcher         `json:"Catch"`
	Choices        []json.RawMessage `json:"Choices"`
	Default        string            `json:"Default"`
	Error          string            `json:"Error"`
	Cause          string            `json:"Cause"`

	// Parsed forms.
	inputPath, outputPath, resultPath optPath
	parameters, resultSelector        any
	result                            any
	choices                           []*rule
}

type retrier struct {
	ErrorEquals     []string `json:"ErrorEquals"`
	IntervalSeconds *float64 `json:"IntervalSeconds"`
	MaxAttempts     *int     `json:"MaxAttempts"`
	BackoffRate     *float64 `json:"BackoffRate"`
}

type catcher struct {
	ErrorEquals []string        `json:"ErrorEquals"`
	ResultPath  json.RawMessage `json:"ResultPath"`
	Next        string          `json:"Next"`
	resultPath  optPath
}

// optPath is a path field: absent (the default, "$"), null, or a path.
type optPath struct {
	null bool
	path path
}

// The fields each state type may have, beyond Type and Comment.
var allowedFields = map[string][]string{
	"Pass":    {"Next", "End", "InputPath", "OutputPath", "ResultPath", "Parameters", "Result"},
	"Task":    {"Next", "End", "InputPath", "OutputPath", "ResultPath", "Parameters", "ResultSelector", "Resource", "TimeoutSeconds", "Retry", "Catch"},
	"Choice":  {"InputPath", "OutputPath", "Choices", "Default"},
	"Succeed": {"InputPath", "OutputPath"},
	"Fail":    {"Error", "Cause"},
}

// Parse parses an ASL definition, refusing what this package does not
// implement and what the specification forbids (a missing Next, a Next to no
// state, States.ALL not alone and last, ...).
func Parse(data []byte) (*Machine, error) {
	var def definition
	if err := strictUnmarshal(data, &def); err != nil {
		return nil, fmt.Errorf("statemachine: definition: %w", err)
	}
	if def.StartAt == "" || len(def.States) == 0 {
		return nil, fmt.Errorf("statemachine: definition needs StartAt and States")
	}
	if def.TimeoutSeconds < 0 {
		return nil, fmt.Errorf("statemachine: TimeoutSeconds must be positive")
	}
	m := &Machine{startAt: def.StartAt, timeoutSeconds: def.TimeoutSeconds, states: map[string]*state{}}
	names := make([]string, 0, len(def.States))
	for name := range def.States {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		s, err := parseState(name, def.States[name])
		if err != nil {
			return nil, fmt.Errorf("statemachine: state %s: %w", name, err)
		}
		m.states[name] = s
	}
	if m.states[def.StartAt] == nil {
		return nil, fmt.Errorf("statemachine: StartAt %q names no state", def.StartAt)
	}
	for _, name := range names {
		s := m.states[name]
		for _, t := range s.successors() {
			if m.states[t] == nil {
				return nil, fmt.Errorf("statemachine: state %s: Next %q names no state", name, t)
			}
		}
	}
	return m, nil
}

func strictUnmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data after the JSON value")
	}
	return nil
}

func parseState(name string, raw json.RawMessage) (*state, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, err
	}
	var typ string
	_ = json.Unmarshal(fields["Type"], &typ)
	allowed, ok := allowedFields[typ]
	if !ok {
		return nil, fmt.Errorf("type %q is not supported (only Pass, Task, Choice, Succeed, Fail)", typ)
	}
	s := &state{name: name}
	if err := strictUnmarshal(raw, s); err != nil {
		return nil, err
	}
	for f := range fields {
		if f != "Type" && f != "Comment" && !slices.Contains(allowed, f) {
			return nil, fmt.Errorf("a %s state cannot have %s", s.Type, f)
		}
	}
	switch s.Type {
	case "Pass", "Task":
		if s.End == (s.Next != "") {
			return nil, fmt.Errorf("needs exactly one of Next and End")
		}
	case "Choice":
		if len(s.Choices) == 0 {
			return nil, fmt.Errorf("a Choice state needs Choices")
		}
	}
	var err error
	if s.inputPath, err = parseOptPath(s.InputPath, "InputPath", false); err != nil {
		return nil, err
	}
	if s.outputPath, err = parseOptPath(s.OutputPath, "OutputPath", false); err != nil {
		return nil, err
	}
	if s.resultPath, err = parseOptPath(s.ResultPath, "ResultPath", true); err != nil {
		return nil, err
	}
	if s.parameters, err = parseTemplate(s.Parameters, "Parameters"); err != nil {
		return nil, err
	}
	if s.resultSelector, err = parseTemplate(s.ResultSelector, "ResultSelector"); err != nil {
		return nil, err
	}
	if len(s.Result) > 0 {
		if s.result, err = decode(s.Result); err != nil {
			return nil, at("Result", err)
		}
	}
	if s.Type == "Task" {
		if s.Resource == "" {
			return nil, fmt.Errorf("a Task needs a Resource")
		}
		if s.TimeoutSeconds < 0 {
			return nil, fmt.Errorf("TimeoutSeconds must be positive")
		}
	}
	for i, r := range s.Retry {
		if err := checkErrorEquals(r.ErrorEquals, i, len(s.Retry)); err != nil {
			return nil, at(fmt.Sprintf("Retry[%d]", i), err)
		}
		if r.MaxAttempts != nil && *r.MaxAttempts < 0 || r.IntervalSeconds != nil && *r.IntervalSeconds < 1 || r.BackoffRate != nil && *r.BackoffRate < 1 {
			return nil, at(fmt.Sprintf("Retry[%d]", i), errors.New("MaxAttempts must be at least 0, IntervalSeconds and BackoffRate at least 1"))
		}
	}
	for i := range s.Catch {
		c := &s.Catch[i]
		if err := checkErrorEquals(c.ErrorEquals, i, len(s.Catch)); err != nil {
			return nil, at(fmt.Sprintf("Catch[%d]", i), err)
		}
		if c.Next == "" {
			return nil, at(fmt.Sprintf("Catch[%d]", i), errors.New("needs Next"))
		}
		if c.resultPath, err = parseOptPath(c.ResultPath, "Catch ResultPath", true); err != nil {
			return nil, err
		}
	}
	for i, raw := range s.Choices {
		r, err := parseRule(raw, true)
		if err != nil {
			return nil, at(fmt.Sprintf("Choices[%d]", i), err)
		}
		s.choices = append(s.choices, r)
	}
	return s, nil
}

// checkErrorEquals enforces the specification's rule that States.ALL appears
// alone, in the last retrier or catcher.
func checkErrorEquals(names []string, i, n int) error {
	if len(names) == 0 {
		return fmt.Errorf("ErrorEquals is empty")
	}
	if slices.Contains(names, ErrAll) && (len(names) > 1 || i != n-1) {
		return fmt.Errorf("%s must appear alone, in the last element", ErrAll)
	}
	return nil
}

func parseOptPath(raw json.RawMessage, field string, reference bool) (optPath, error) {
	if len(raw) == 0 {
		return optPath{path: rootPath}, nil
	}
	if string(raw) == "null" {
		return optPath{null: true}, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return optPath{}, fmt.Errorf("%s must be a string or null", field)
	}
	p, err := parsePath(s)
	if err != nil {
		return optPath{}, at(field, err)
	}
	return optPath{path: p}, nil
}

func decode(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// pathValue marks a Parameters or ResultSelector value taken from a path.
type pathValue struct{ path path }

// parseTemplate parses a Parameters or ResultSelector object, turning the
// values of keys ending in ".$" into paths.
func parseTemplate(raw json.RawMessage, field string) (any, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	v, err := decode(raw)
	if err != nil {
		return nil, at(field, err)
	}
	if _, ok := v.(map[string]any); !ok && field == "ResultSelector" {
		return nil, fmt.Errorf("%s must be an object", field)
	}
	return compileTemplate(v, field)
}

func compileTemplate(v any, where string) (any, error) {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			if name, ok := strings.CutSuffix(k, ".$"); ok {
				s, isString := x.(string)
				if !isString {
					return nil, fmt.Errorf("%s.%s: a value of a key ending in .$ must be a path", where, k)
				}
				if strings.HasPrefix(s, "States.") {
					return nil, fmt.Errorf("%s.%s: intrinsic functions are not supported: %s", where, k, s)
				}
				p, err := parsePath(s)
				if err != nil {
					return nil, fmt.Errorf("%s.%s: %w", where, k, err)
				}
				out[name] = pathValue{p}
				continue
			}
			c, err := compileTemplate(x, where+"."+k)
			if err != nil {
				return nil, err
			}
			out[k] = c
		}
		return out, nil
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			c, err := compileTemplate(x, fmt.Sprintf("%s[%d]", where, i))
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	}
	return v, nil
}

// render fills a compiled template from input.
func render(t any, input any) (any, error) {
	switch t := t.(type) {
	case pathValue:
		return t.path.get(input)
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			v, err := render(x, input)
			if err != nil {
				return nil, err
			}
			out[k] = v
		}
		return out, nil
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			v, err := render(x, input)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	return t, nil
}

var substitution = regexp.MustCompile(`\$\{([A-Za-z0-9_]+)\}`)

// Substitutions returns the names of the ${Name} placeholders in def, which
// a SAM template's DefinitionSubstitutions fills, sorted and without repeats.
func Substitutions(def []byte) []string {
	var names []string
	for _, m := range substitution.FindAllSubmatch(def, -1) {
		if n := string(m[1]); !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// Substitute replaces each ${Name} placeholder in def with values[Name], as
// DefinitionSubstitutions does on deploy. A placeholder without a value is an
// error. The values are inserted inside JSON strings, so they are escaped.
func Substitute(def []byte, values map[string]string) ([]byte, error) {
	var missing []string
	out := substitution.ReplaceAllFunc(def, func(m []byte) []byte {
		name := string(m[2 : len(m)-1])
		v, ok := values[name]
		if !ok {
			missing = append(missing, name)
			return m
		}
		b, _ := json.Marshal(v) // a string always encodes
		return b[1 : len(b)-1]
	})
	if len(missing) > 0 {
		return nil, fmt.Errorf("statemachine: no value for the substitution %s", strings.Join(missing, ", "))
	}
	return out, nil
}

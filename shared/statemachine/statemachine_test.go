package statemachine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// canon re-encodes JSON so that outputs compare independent of key order and spacing.
func canon(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("not JSON: %v: %s", err, s)
	}
	return v
}

// tasks is a TaskFunc answering per resource: a JSON result, or an error.
type tasks map[string]func(params string) (string, error)

func (ts tasks) run(calls *[]string, mu *sync.Mutex) TaskFunc {
	return func(ctx context.Context, resource string, params json.RawMessage) (json.RawMessage, error) {
		mu.Lock()
		*calls = append(*calls, resource+" "+string(params))
		mu.Unlock()
		f, ok := ts[resource]
		if !ok {
			return nil, fmt.Errorf("no task %s", resource)
		}
		out, err := f(string(params))
		if err != nil {
			return nil, err
		}
		return json.RawMessage(out), nil
	}
}

func ok(out string) func(string) (string, error) {
	return func(string) (string, error) { return out, nil }
}

func fail(name string) func(string) (string, error) {
	return func(string) (string, error) { return "", &Error{Name: name, Cause: "it broke"} }
}

// failTimes fails with name n times, then answers out.
func failTimes(n int, name, out string) func(string) (string, error) {
	var mu sync.Mutex
	return func(string) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		if n > 0 {
			n--
			return "", &Error{Name: name, Cause: "transient"}
		}
		return out, nil
	}
}

func TestRun(t *testing.T) {
	tests := []struct {
		name   string
		def    string
		input  string
		tasks  tasks
		want   string
		err    string // the ASL error name of a failed execution
		calls  int    // task calls expected, when checked (-1: not checked)
		sleeps []time.Duration
	}{
		{
			name:  "a Pass state without fields passes its input on",
			def:   `{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`,
			input: `{"a":1}`, want: `{"a":1}`,
		},
		{
			name:  "a Pass state's Result replaces the input when ResultPath is absent",
			def:   `{"StartAt":"P","States":{"P":{"Type":"Pass","Result":{"x":true},"End":true}}}`,
			input: `{"a":1}`, want: `{"x":true}`,
		},
		{
			name:  "ResultPath places the result inside the raw input",
			def:   `{"StartAt":"P","States":{"P":{"Type":"Pass","Result":"r","ResultPath":"$.b","End":true}}}`,
			input: `{"a":1}`, want: `{"a":1,"b":"r"}`,
		},
		{
			name:  "ResultPath creates the intervening objects",
			def:   `{"StartAt":"P","States":{"P":{"Type":"Pass","Result":1,"ResultPath":"$.x.y.z","End":true}}}`,
			input: `{"x":{"k":0}}`, want: `{"x":{"k":0,"y":{"z":1}}}`,
		},
		{
			name:  "ResultPath null keeps the raw input and drops the result",
			def:   `{"StartAt":"P","States":{"P":{"Type":"Pass","Result":"r","ResultPath":null,"End":true}}}`,
			input: `{"a":1}`, want: `{"a":1}`,
		},
		{
			name:  "ResultPath into an array element replaces it",
			def:   `{"StartAt":"P","States":{"P":{"Type":"Pass","Result":"r","ResultPath":"$.a[1]","End":true}}}`,
			input: `{"a":[0,1,2]}`, want: `{"a":[0,"r",2]}`,
		},
		{
			name:  "ResultPath through a string is a ResultPathMatchFailure",
			def:   `{"StartAt":"P","States":{"P":{"Type":"Pass","Result":"r","ResultPath":"$.a.b","End":true}}}`,
			input: `{"a":"text"}`, err: ErrResultPathMatch,
		},
		{
			name:  "InputPath selects what Parameters and the result see, ResultPath writes into the raw input",
			def:   `{"StartAt":"P","States":{"P":{"Type":"Pass","InputPath":"$.in","ResultPath":"$.out","End":true}}}`,
			input: `{"in":{"v":[1,2]},"keep":true}`, want: `{"in":{"v":[1,2]},"keep":true,"out":{"v":[1,2]}}`,
		},
		{
			name:  "InputPath null gives an empty object",
			def:   `{"StartAt":"P","States":{"P":{"Type":"Pass","InputPath":null,"ResultPath":"$.e","End":true}}}`,
			input: `{"a":1}`, want: `{"a":1,"e":{}}`,
		},
		{
			name:  "Parameters resolve .$ keys, index into arrays and keep literals",
			def:   `{"StartAt":"P","States":{"P":{"Type":"Pass","Parameters":{"first.$":"$.list[0]","name.$":"$.o.name","lit":{"n":[1,"two"]},"all.$":"$"},"End":true}}}`,
			input: `{"list":["a","b"],"o":{"name":"n"}}`,
			want:  `{"first":"a","name":"n","lit":{"n":[1,"two"]},"all":{"list":["a","b"],"o":{"name":"n"}}}`,
		},
		{
			name:  "a Parameters path to a missing field is a States.Runtime error",
			def:   `{"StartAt":"P","States":{"P":{"Type":"Pass","Parameters":{"x.$":"$.missing"},"End":true}}}`,
			input: `{}`, err: ErrRuntime,
		},
		{
			name:  "OutputPath selects the output",
			def:   `{"StartAt":"P","States":{"P":{"Type":"Pass","Result":{"a":{"b":2}},"ResultPath":"$.r","OutputPath":"$.r.a","End":true}}}`,
			input: `{}`, want: `{"b":2}`,
		},
		{
			name:  "an OutputPath to a missing field is a States.Runtime error",
			def:   `{"StartAt":"P","States":{"P":{"Type":"Pass","OutputPath":"$.nope","End":true}}}`,
			input: `{}`, err: ErrRuntime,
		},
		{
			name:  "numbers keep their exact value",
			def:   `{"StartAt":"P","States":{"P":{"Type":"Pass","Parameters":{"n.$":"$.n"},"End":true}}}`,
			input: `{"n":12345678901234567890}`, want: `{"n":12345678901234567890}`,
		},
		{
			name: "a Task gets its effective parameters; ResultSelector, then ResultPath, then OutputPath shape its output",
			def: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"fn","Parameters":{"q.$":"$.q","k":1},
				"ResultSelector":{"got.$":"$.Payload.v"},"ResultPath":"$.res","OutputPath":"$.res","End":true}}}`,
			input: `{"q":"hi"}`,
			tasks: tasks{"fn": func(p string) (string, error) {
				if p != `{"k":1,"q":"hi"}` {
					return "", fmt.Errorf("unexpected parameters %s", p)
				}
				return `{"Payload":{"v":"answer"},"StatusCode":200}`, nil
			}},
			want: `{"got":"answer"}`, calls: 1,
		},
		{
			name:  "a ResultSelector path to a missing field is a States.Runtime error no Catch catches",
			def:   `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"fn","ResultSelector":{"x.$":"$.nope"},"Catch":[{"ErrorEquals":["States.ALL"],"Next":"F"}],"End":true},"F":{"Type":"Pass","End":true}}}`,
			input: `{}`, tasks: tasks{"fn": ok(`{}`)}, err: ErrRuntime,
		},
		{
			name: "Catch States.ALL with a ResultPath keeps the input and adds Error and Cause",
			def: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"fn","Catch":[{"ErrorEquals":["States.ALL"],"ResultPath":"$.error","Next":"F"}],"End":true},
				"F":{"Type":"Pass","End":true}}}`,
			input: `{"a":1}`, tasks: tasks{"fn": fail("Custom.Error")},
			want: `{"a":1,"error":{"Error":"Custom.Error","Cause":"it broke"}}`, calls: 1,
		},
		{
			name:  "Catch without ResultPath replaces the input with the error",
			def:   `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"fn","Catch":[{"ErrorEquals":["States.TaskFailed"],"Next":"F"}],"End":true},"F":{"Type":"Pass","End":true}}}`,
			input: `{"a":1}`, tasks: tasks{"fn": fail("Sandbox.Timedout")},
			want: `{"Error":"Sandbox.Timedout","Cause":"it broke"}`,
		},
		{
			name: "the first catcher that matches wins",
			def: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"fn","Catch":[
				{"ErrorEquals":["Other"],"Next":"A"},{"ErrorEquals":["Mine","Other2"],"Next":"B"},{"ErrorEquals":["States.ALL"],"Next":"C"}],"End":true},
				"A":{"Type":"Pass","Result":"A","End":true},"B":{"Type":"Pass","Result":"B","End":true},"C":{"Type":"Pass","Result":"C","End":true}}}`,
			input: `{}`, tasks: tasks{"fn": fail("Mine")}, want: `"B"`,
		},
		{
			name:  "a plain Go error from a task is States.TaskFailed",
			def:   `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"fn","Catch":[{"ErrorEquals":["States.TaskFailed"],"Next":"F"}],"End":true},"F":{"Type":"Pass","OutputPath":"$.Error","End":true}}}`,
			input: `{}`, tasks: tasks{"fn": func(string) (string, error) { return "", errors.New("boom") }},
			want: `"States.TaskFailed"`,
		},
		{
			name:  "an error no catcher matches fails the execution with its name",
			def:   `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"fn","Catch":[{"ErrorEquals":["Other"],"Next":"F"}],"End":true},"F":{"Type":"Pass","End":true}}}`,
			input: `{}`, tasks: tasks{"fn": fail("Lambda.Unknown")}, err: "Lambda.Unknown",
		},
		{
			name: "Retry waits IntervalSeconds times BackoffRate to the attempt, then succeeds",
			def: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"fn","Retry":[{"ErrorEquals":["Lambda.ServiceException"],"IntervalSeconds":2,"MaxAttempts":3,"BackoffRate":1.5}],
				"End":true}}}`,
			input: `{}`, tasks: tasks{"fn": failTimes(3, "Lambda.ServiceException", `"done"`)},
			want: `"done"`, calls: 4, sleeps: []time.Duration{2 * time.Second, 3 * time.Second, 4500 * time.Millisecond},
		},
		{
			name: "Retry gives up after MaxAttempts and the Catch takes over",
			def: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"fn","Retry":[{"ErrorEquals":["Lambda.ServiceException"],"IntervalSeconds":1,"MaxAttempts":2,"BackoffRate":2}],
				"Catch":[{"ErrorEquals":["States.ALL"],"ResultPath":"$.e","Next":"F"}],"End":true},"F":{"Type":"Pass","OutputPath":"$.e.Error","End":true}}}`,
			input: `{}`, tasks: tasks{"fn": fail("Lambda.ServiceException")},
			want: `"Lambda.ServiceException"`, calls: 3, sleeps: []time.Duration{time.Second, 2 * time.Second},
		},
		{
			name:  "Retry defaults to three attempts, one second apart, doubling",
			def:   `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"fn","Retry":[{"ErrorEquals":["States.ALL"]}],"End":true}}}`,
			input: `{}`, tasks: tasks{"fn": fail("X")},
			err: "X", calls: 4, sleeps: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second},
		},
		{
			name:  "MaxAttempts 0 never retries",
			def:   `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"fn","Retry":[{"ErrorEquals":["States.ALL"],"MaxAttempts":0}],"End":true}}}`,
			input: `{}`, tasks: tasks{"fn": fail("X")}, err: "X", calls: 1,
		},
		{
			name:  "an error the retrier does not name is not retried",
			def:   `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"fn","Retry":[{"ErrorEquals":["Lambda.ServiceException"]}],"End":true}}}`,
			input: `{}`, tasks: tasks{"fn": fail("ToolError")}, err: "ToolError", calls: 1,
		},
		{
			name:  "States.TaskFailed does not match States.Timeout",
			def:   `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"fn","Catch":[{"ErrorEquals":["States.TaskFailed"],"Next":"F"}],"End":true},"F":{"Type":"Pass","End":true}}}`,
			input: `{}`, tasks: tasks{"fn": fail(ErrTimeout)}, err: ErrTimeout,
		},
		{
			name: "Choice takes the first rule that matches, and its OutputPath applies",
			def: `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[
				{"Variable":"$.s","StringEquals":"no","Next":"A"},
				{"Variable":"$.s","StringEquals":"yes","Next":"B"},
				{"Variable":"$.b","BooleanEquals":true,"Next":"A"}],"Default":"A","OutputPath":"$.s"},
				"A":{"Type":"Pass","Result":"A","End":true},"B":{"Type":"Pass","ResultPath":"$","End":true}}}`,
			input: `{"s":"yes","b":true}`, want: `"yes"`,
		},
		{
			name:  "Choice falls to Default",
			def:   `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Variable":"$.n","NumericEquals":2,"Next":"A"}],"Default":"B"},"A":{"Type":"Pass","Result":"A","End":true},"B":{"Type":"Pass","Result":"B","End":true}}}`,
			input: `{"n":2.5}`, want: `"B"`,
		},
		{
			name:  "NumericEquals compares values, not spellings",
			def:   `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Variable":"$.n","NumericEquals":2,"Next":"A"}],"Default":"B"},"A":{"Type":"Pass","Result":"A","End":true},"B":{"Type":"Pass","Result":"B","End":true}}}`,
			input: `{"n":2.0}`, want: `"A"`,
		},
		{
			name:  "Choice without a match or Default fails with States.NoChoiceMatched",
			def:   `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Variable":"$.b","BooleanEquals":true,"Next":"A"}]},"A":{"Type":"Succeed"}}}`,
			input: `{"b":false}`, err: ErrNoChoiceMatched,
		},
		{
			name:  "a comparison of a missing variable is a States.Runtime error",
			def:   `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Variable":"$.b","BooleanEquals":true,"Next":"A"}],"Default":"A"},"A":{"Type":"Succeed"}}}`,
			input: `{}`, err: ErrRuntime,
		},
		{
			name:  "a comparison of a value of another type is false, not an error",
			def:   `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Variable":"$.b","BooleanEquals":true,"Next":"A"}],"Default":"B"},"A":{"Type":"Pass","Result":"A","End":true},"B":{"Type":"Pass","Result":"B","End":true}}}`,
			input: `{"b":"true"}`, want: `"B"`,
		},
		{
			name: "And stops at the first false rule, so IsPresent guards the comparison after it",
			def: `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"And":[{"Variable":"$.r.isError","IsPresent":true},{"Variable":"$.r.isError","BooleanEquals":true}],"Next":"A"}],"Default":"B"},
				"A":{"Type":"Pass","Result":"A","End":true},"B":{"Type":"Pass","Result":"B","End":true}}}`,
			input: `{"r":{}}`, want: `"B"`,
		},
		{
			name: "And, Or and Not combine",
			def: `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Or":[{"Variable":"$.a","StringEquals":"x"},{"Not":{"And":[{"Variable":"$.p","IsPresent":true},{"Variable":"$.q","IsPresent":true}]}}],"Next":"A"}],"Default":"B"},
				"A":{"Type":"Pass","Result":"A","End":true},"B":{"Type":"Pass","Result":"B","End":true}}}`,
			input: `{"a":"y","p":1}`, want: `"A"`,
		},
		{
			name:  "IsPresent false matches a missing field",
			def:   `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Variable":"$.p","IsPresent":false,"Next":"A"}],"Default":"B"},"A":{"Type":"Pass","Result":"A","End":true},"B":{"Type":"Pass","Result":"B","End":true}}}`,
			input: `{}`, want: `"A"`,
		},
		{
			name:  "IsPresent is true for a field that is null",
			def:   `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Variable":"$.p","IsPresent":true,"Next":"A"}],"Default":"B"},"A":{"Type":"Pass","Result":"A","End":true},"B":{"Type":"Pass","Result":"B","End":true}}}`,
			input: `{"p":null}`, want: `"A"`,
		},
		{
			name:  "Succeed ends the execution with its output",
			def:   `{"StartAt":"S","States":{"S":{"Type":"Succeed","InputPath":"$.a","OutputPath":"$.b"}}}`,
			input: `{"a":{"b":"out"}}`, want: `"out"`,
		},
		{
			name:  "Fail ends the execution with its Error",
			def:   `{"StartAt":"F","States":{"F":{"Type":"Fail","Error":"Pipeline.Broken","Cause":"on purpose"}}}`,
			input: `{}`, err: "Pipeline.Broken",
		},
		{
			name:  "input that is not an object still runs",
			def:   `{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`,
			input: `[1,2]`, want: `[1,2]`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Parse([]byte(tc.def))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			var calls []string
			var mu sync.Mutex
			var sleeps []time.Duration
			out, err := m.Run(context.Background(), json.RawMessage(tc.input), RunOptions{
				Task:  tc.tasks.run(&calls, &mu),
				Sleep: func(_ context.Context, d time.Duration) error { sleeps = append(sleeps, d); return nil },
			})
			if tc.err != "" {
				var e *Error
				if !errors.As(err, &e) || e.Name != tc.err {
					t.Fatalf("Run = %s, %v; want the execution to fail with %s", out, err, tc.err)
				}
			} else {
				if err != nil {
					t.Fatalf("Run: %v (task calls %q)", err, calls)
				}
				if diff := cmp.Diff(canon(t, tc.want), canon(t, string(out))); diff != "" {
					t.Errorf("output mismatch (-want +got):\n%s", diff)
				}
			}
			if tc.calls > 0 && len(calls) != tc.calls {
				t.Errorf("%d task calls, want %d: %q", len(calls), tc.calls, calls)
			}
			if diff := cmp.Diff(tc.sleeps, sleeps); diff != "" {
				t.Errorf("retry waits mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTaskTimeoutSecondsIsStatesTimeout(t *testing.T) {
	def := `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"fn","TimeoutSeconds":1,
		"Catch":[{"ErrorEquals":["States.Timeout"],"ResultPath":"$.e","Next":"F"}],"End":true},"F":{"Type":"Pass","OutputPath":"$.e.Error","End":true}}}`
	m, err := Parse([]byte(def))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		task TaskFunc
	}{
		{"a task that returns its context's error", func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}},
		{"a task that ignores its context", func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, error) {
			time.Sleep(1500 * time.Millisecond)
			return json.RawMessage(`{}`), nil
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := m.Run(context.Background(), json.RawMessage(`{}`), RunOptions{Task: tc.task})
			if err != nil || string(out) != `"States.Timeout"` {
				t.Errorf("Run = %s, %v; want the catcher to see States.Timeout", out, err)
			}
		})
	}
}

func TestMachineTimeoutSecondsFailsTheExecution(t *testing.T) {
	m, err := Parse([]byte(`{"StartAt":"T","TimeoutSeconds":1,"States":{"T":{"Type":"Task","Resource":"fn","Catch":[{"ErrorEquals":["States.ALL"],"Next":"F"}],"End":true},"F":{"Type":"Pass","End":true}}}`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Run(context.Background(), json.RawMessage(`{}`), RunOptions{Task: func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}})
	var e *Error
	if !errors.As(err, &e) || e.Name != ErrTimeout {
		t.Errorf("Run: %v, want the execution to fail with States.Timeout", err)
	}
}

func TestACancelledContextStopsTheExecution(t *testing.T) {
	m, err := Parse([]byte(`{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"fn","Catch":[{"ErrorEquals":["States.ALL"],"Next":"F"}],"End":true},"F":{"Type":"Pass","End":true}}}`))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	_, err = m.Run(ctx, json.RawMessage(`{}`), RunOptions{Task: func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		cancel()
		return nil, errors.New("cancelled")
	}})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Run: %v, want context.Canceled rather than a caught failure", err)
	}
}

func TestParseRefusesWhatItDoesNotImplement(t *testing.T) {
	tests := []struct{ name, def, want string }{
		{"a Map state", `{"StartAt":"M","States":{"M":{"Type":"Map","End":true}}}`, `type "Map" is not supported`},
		{"a Wait state", `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":1,"End":true}}}`, `type "Wait" is not supported`},
		{"an unknown field", `{"StartAt":"P","States":{"P":{"Type":"Pass","Heartbeat":1,"End":true}}}`, "unknown field"},
		{"a field of another state type", `{"StartAt":"P","States":{"P":{"Type":"Pass","Resource":"x","End":true}}}`, "a Pass state cannot have Resource"},
		{"an intrinsic function", `{"StartAt":"P","States":{"P":{"Type":"Pass","Parameters":{"n.$":"States.ArrayLength($.a)"},"End":true}}}`, "intrinsic functions are not supported"},
		{"the context object", `{"StartAt":"P","States":{"P":{"Type":"Pass","Parameters":{"n.$":"$$.Execution.Id"},"End":true}}}`, "context object"},
		{"a wildcard path", `{"StartAt":"P","States":{"P":{"Type":"Pass","InputPath":"$.a[*]","End":true}}}`, "unsupported step"},
		{"a filter path", `{"StartAt":"P","States":{"P":{"Type":"Pass","InputPath":"$.a[?(@.x)]","End":true}}}`, "unsupported step"},
		{"an unsupported comparison", `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Variable":"$.n","NumericGreaterThan":1,"Next":"C"}]}}}`, "operator NumericGreaterThan is not supported"},
		{"a comparison with an operand of the wrong type", `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Variable":"$.n","BooleanEquals":"yes","Next":"C"}]}}}`, "wrong type"},
		{"a rule without Next", `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Variable":"$.b","BooleanEquals":true}]}}}`, "needs Next"},
		{"a Next to nowhere", `{"StartAt":"P","States":{"P":{"Type":"Pass","Next":"Q"}}}`, `Next "Q" names no state`},
		{"both Next and End", `{"StartAt":"P","States":{"P":{"Type":"Pass","Next":"P","End":true}}}`, "exactly one of Next and End"},
		{"neither Next nor End", `{"StartAt":"P","States":{"P":{"Type":"Pass"}}}`, "exactly one of Next and End"},
		{"a missing StartAt state", `{"StartAt":"X","States":{"P":{"Type":"Pass","End":true}}}`, `StartAt "X" names no state`},
		{"States.ALL not last", `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"r","Catch":[{"ErrorEquals":["States.ALL"],"Next":"T"},{"ErrorEquals":["X"],"Next":"T"}],"End":true}}}`, "must appear alone, in the last"},
		{"States.ALL with another name", `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"r","Retry":[{"ErrorEquals":["X","States.ALL"]}],"End":true}}}`, "must appear alone"},
		{"a Task without Resource", `{"StartAt":"T","States":{"T":{"Type":"Task","End":true}}}`, "needs a Resource"},
		{"a ResultSelector that is not an object", `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"r","ResultSelector":"$.x","End":true}}}`, "must be an object"},
		{"trailing data", `{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}} {}`, "trailing data"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.def))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestSubstitute(t *testing.T) {
	def := []byte(`{"a":"${One}","b":"x-${Two}-${One}"}`)
	if diff := cmp.Diff([]string{"One", "Two"}, Substitutions(def)); diff != "" {
		t.Errorf("Substitutions mismatch (-want +got):\n%s", diff)
	}
	got, err := Substitute(def, map[string]string{"One": "1", "Two": `a"b`})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"a":"1","b":"x-a\"b-1"}`; string(got) != want {
		t.Errorf("Substitute = %s, want %s", got, want)
	}
	if _, err := Substitute(def, map[string]string{"One": "1"}); err == nil || !strings.Contains(err.Error(), "Two") {
		t.Errorf("Substitute without Two: %v, want an error naming it", err)
	}
}

func TestWorstCaseCountsEveryAttemptAndRetryWaitOnTheSlowestPath(t *testing.T) {
	tests := []struct {
		name string
		def  string
		want time.Duration
		err  string
	}{
		{
			name: "a task without retries takes its timeout",
			def:  `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"fn","TimeoutSeconds":4,"End":true}}}`,
			want: 4 * time.Second,
		},
		{
			name: "retries add an attempt and a growing wait each",
			def: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"fn","TimeoutSeconds":5,
				"Retry":[{"ErrorEquals":["Lambda.TooManyRequestsException"],"IntervalSeconds":1,"MaxAttempts":2,"BackoffRate":3}],"End":true}}}`,
			want: (5 + 1 + 5 + 3 + 5) * time.Second,
		},
		{
			name: "a retrier without settings retries three times after 1, 2 and 4 seconds",
			def:  `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"fn","TimeoutSeconds":2,"Retry":[{"ErrorEquals":["States.ALL"]}],"End":true}}}`,
			want: (2 + 1 + 2 + 2 + 2 + 4 + 2) * time.Second,
		},
		{
			name: "each retrier counts its own attempts",
			def: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"fn","TimeoutSeconds":2,
				"Retry":[{"ErrorEquals":["A"],"MaxAttempts":1},{"ErrorEquals":["B"],"MaxAttempts":1,"IntervalSeconds":3}],"End":true}}}`,
			want: (2 + 1 + 2 + 3 + 2) * time.Second,
		},
		{
			name: "the slowest branch counts, through Choice and Catch",
			def: `{"StartAt":"C","States":{
				"C":{"Type":"Choice","Choices":[{"Variable":"$.a","IsPresent":true,"Next":"Slow"}],"Default":"Fast"},
				"Fast":{"Type":"Task","Resource":"fn","TimeoutSeconds":1,"End":true},
				"Slow":{"Type":"Task","Resource":"fn","TimeoutSeconds":3,"Catch":[{"ErrorEquals":["States.ALL"],"Next":"Fallback"}],"Next":"Done"},
				"Fallback":{"Type":"Task","Resource":"fn","TimeoutSeconds":5,"End":true},
				"Done":{"Type":"Pass","End":true}}}`,
			want: 8 * time.Second,
		},
		{
			name: "a task without TimeoutSeconds has no bound",
			def:  `{"StartAt":"P","States":{"P":{"Type":"Pass","Next":"T"},"T":{"Type":"Task","Resource":"fn","End":true}}}`,
			err:  "task T has no TimeoutSeconds",
		},
		{
			name: "a loop has no bound",
			def: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"fn","TimeoutSeconds":1,"Next":"C"},
				"C":{"Type":"Choice","Choices":[{"Variable":"$.again","BooleanEquals":true,"Next":"T"}],"Default":"D"},"D":{"Type":"Succeed"}}}`,
			err: "part of a loop",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Parse([]byte(tc.def))
			if err != nil {
				t.Fatal(err)
			}
			got, err := m.WorstCase()
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("WorstCase = %v, %v; want an error containing %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("WorstCase = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

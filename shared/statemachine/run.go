package statemachine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// TaskFunc runs one Task state: resource is its Resource, parameters its
// effective input (after InputPath and Parameters). It returns the task's
// result, or an error: an [*Error] names the ASL error (a Lambda function's
// errorType, for instance); any other error is States.TaskFailed. ctx ends at
// the state's TimeoutSeconds.
type TaskFunc func(ctx context.Context, resource string, parameters json.RawMessage) (json.RawMessage, error)

// RunOptions configure one execution.
type RunOptions struct {
	// Task runs Task states. Required if the machine has any.
	Task TaskFunc
	// Sleep waits between retries. If nil, it waits d or until ctx is done;
	// tests pass one that records d and returns at once.
	Sleep func(ctx context.Context, d time.Duration) error
	// Trace, if set, is called with each state's name as it is entered.
	Trace func(state string)
}

// maxTransitions bounds an execution, so that a definition with a loop
// cannot run forever (Express workflows end after five minutes on AWS).
const maxTransitions = 10000

// Run executes the machine on input and returns its output. A failed
// execution (a Fail state, an error no Catch caught, a States.Runtime error,
// the machine's TimeoutSeconds passing) returns an [*Error]; a ctx that ends
// returns ctx's error.
func (m *Machine) Run(ctx context.Context, input json.RawMessage, opts RunOptions) (json.RawMessage, error) {
	if opts.Sleep == nil {
		opts.Sleep = sleep
	}
	v, err := decode(input)
	if err != nil {
		return nil, &Error{Name: ErrRuntime, Cause: fmt.Sprintf("the execution input is not JSON: %v", err)}
	}
	if m.timeoutSeconds > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, time.Duration(m.timeoutSeconds)*time.Second, errMachineTimeout)
		defer cancel()
	}
	name := m.startAt
	for range maxTransitions {
		if err := ctx.Err(); err != nil {
			return nil, contextErr(ctx)
		}
		s := m.states[name]
		if opts.Trace != nil {
			opts.Trace(name)
		}
		out, next, err := m.step(ctx, s, v, opts)
		if err != nil {
			if ctx.Err() != nil {
				return nil, contextErr(ctx)
			}
			return nil, err
		}
		if next == "" {
			b, err := marshal(out)
			if err != nil {
				return nil, runtimeErr("encoding the output: %v", err)
			}
			return b, nil
		}
		v, name = out, next
	}
	return nil, runtimeErr("the execution exceeded %d state transitions", maxTransitions)
}

var errMachineTimeout = errors.New("the state machine's TimeoutSeconds passed")

func contextErr(ctx context.Context) error {
	if context.Cause(ctx) == errMachineTimeout {
		return &Error{Name: ErrTimeout, Cause: errMachineTimeout.Error()}
	}
	return ctx.Err()
}

// marshal encodes v without HTML escaping, as invoke.Marshal does, so text
// crosses the state machine as it came.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// step runs state s on raw input and returns its output and the next state
// ("" when the execution ends).
func (m *Machine) step(ctx context.Context, s *state, raw any, opts RunOptions) (any, string, error) {
	switch s.Type {
	case "Fail":
		return nil, "", &Error{Name: s.Error, Cause: s.Cause}
	case "Succeed":
		in, err := applyInputPath(s.inputPath, raw)
		if err != nil {
			return nil, "", err
		}
		out, err := applyOutputPath(s.outputPath, in)
		return out, "", err
	case "Choice":
		in, err := applyInputPath(s.inputPath, raw)
		if err != nil {
			return nil, "", err
		}
		next := s.Default
		for _, r := range s.choices {
			ok, err := r.eval(in)
			if err != nil {
				return nil, "", err
			}
			if ok {
				next = r.next
				break
			}
		}
		if next == "" {
			return nil, "", &Error{Name: ErrNoChoiceMatched, Cause: fmt.Sprintf("no choice rule of state %s matched and it has no Default", s.name)}
		}
		out, err := applyOutputPath(s.outputPath, in)
		return out, next, err
	case "Pass":
		in, err := effectiveInput(s, raw)
		if err != nil {
			return nil, "", err
		}
		result := in
		if s.result != nil {
			result = s.result
		}
		out, err := applyResult(s, raw, result)
		return out, s.Next, err
	case "Task":
		return m.task(ctx, s, raw, opts)
	}
	panic("unreachable: state type " + s.Type)
}

func (m *Machine) task(ctx context.Context, s *state, raw any, opts RunOptions) (any, string, error) {
	in, err := effectiveInput(s, raw)
	if err != nil {
		return nil, "", err
	}
	params, err := marshal(in)
	if err != nil {
		return nil, "", runtimeErr("encoding the parameters of %s: %v", s.name, err)
	}
	if opts.Task == nil {
		return nil, "", runtimeErr("state %s is a Task, but the execution has no TaskFunc", s.name)
	}
	attempts := make([]int, len(s.Retry))
	for {
		result, terr := runTask(ctx, s, params, opts.Task)
		if terr == nil {
			v, err := decode(result)
			if err != nil {
				return nil, "", runtimeErr("the result of task %s is not JSON: %v", s.name, err)
			}
			if s.resultSelector != nil {
				if v, err = render(s.resultSelector, v); err != nil {
					return nil, "", err
				}
			}
			out, err := applyResult(s, raw, v)
			return out, s.Next, err
		}
		if ctx.Err() != nil {
			return nil, "", contextErr(ctx)
		}
		// Retry: the first retrier whose ErrorEquals matches decides.
		if i := slices.IndexFunc(s.Retry, func(r retrier) bool { return matches(r.ErrorEquals, terr.Name) }); i >= 0 {
			r := s.Retry[i]
			if attempts[i] < r.maxAttempts() {
				wait := r.wait(attempts[i])
				attempts[i]++
				if err := opts.Sleep(ctx, wait); err != nil {
					return nil, "", contextErr(ctx)
				}
				continue
			}
		}
		if i := slices.IndexFunc(s.Catch, func(c catcher) bool { return matches(c.ErrorEquals, terr.Name) }); i >= 0 {
			c := s.Catch[i]
			errOut := map[string]any{"Error": terr.Name, "Cause": terr.Cause}
			out, err := applyResultPath(c.resultPath, raw, errOut)
			return out, c.Next, err
		}
		return nil, "", terr
	}
}

// runTask calls f under the state's timeout and names its error.
func runTask(ctx context.Context, s *state, params []byte, f TaskFunc) (json.RawMessage, *Error) {
	tctx := ctx
	if s.TimeoutSeconds > 0 {
		var cancel context.CancelFunc
		tctx, cancel = context.WithTimeout(ctx, time.Duration(s.TimeoutSeconds)*time.Second)
		defer cancel()
	}
	type answer struct {
		out json.RawMessage
		err error
	}
	done := make(chan answer, 1)
	go func() {
		out, err := f(tctx, s.Resource, params)
		done <- answer{out, err}
	}()
	// A task that ignores its context still times out, as on AWS.
	select {
	case a := <-done:
		if a.err == nil {
			return a.out, nil
		}
		var e *Error
		if errors.As(a.err, &e) {
			return nil, e
		}
		if tctx.Err() != nil && ctx.Err() == nil {
			return nil, &Error{Name: ErrTimeout, Cause: fmt.Sprintf("state %s timed out after %d seconds", s.name, s.TimeoutSeconds)}
		}
		return nil, &Error{Name: ErrTaskFailed, Cause: a.err.Error()}
	case <-tctx.Done():
		if ctx.Err() != nil {
			return nil, &Error{Name: ErrTaskFailed, Cause: ctx.Err().Error()}
		}
		return nil, &Error{Name: ErrTimeout, Cause: fmt.Sprintf("state %s timed out after %d seconds", s.name, s.TimeoutSeconds)}
	}
}

// matches reports whether an error named name matches ErrorEquals:
// States.ALL matches every error but States.Runtime, States.TaskFailed every
// error but States.Timeout (and States.Runtime).
func matches(errorEquals []string, name string) bool {
	if name == ErrRuntime {
		return false
	}
	for _, e := range errorEquals {
		switch {
		case e == name, e == ErrAll, e == ErrTaskFailed && name != ErrTimeout:
			return true
		}
	}
	return false
}

// effectiveInput applies InputPath, then Parameters.
func effectiveInput(s *state, raw any) (any, error) {
	in, err := applyInputPath(s.inputPath, raw)
	if err != nil {
		return nil, err
	}
	if s.parameters != nil {
		return render(s.parameters, in)
	}
	return in, nil
}

// applyResult places result into raw with ResultPath and applies OutputPath.
func applyResult(s *state, raw, result any) (any, error) {
	out, err := applyResultPath(s.resultPath, raw, result)
	if err != nil {
		return nil, err
	}
	return applyOutputPath(s.outputPath, out)
}

func applyInputPath(p optPath, raw any) (any, error) {
	if p.null {
		return map[string]any{}, nil
	}
	return p.path.get(raw)
}

func applyOutputPath(p optPath, v any) (any, error) {
	if p.null {
		return map[string]any{}, nil
	}
	return p.path.get(v)
}

func applyResultPath(p optPath, raw, result any) (any, error) {
	if p.null {
		return raw, nil
	}
	return p.path.set(raw, result)
}

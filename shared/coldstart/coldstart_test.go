package coldstart_test

import (
	"context"
	"runtime/debug"
	"testing"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/switchboard-dev/switchboard/shared/coldstart"
)

// wrappers are the two forms of resuming after the first answer, each
// returning the invocation of a handler that records the GC percent.
var wrappers = map[string]func(resume func(), during *int) func() error{
	"a lambda.Handler": func(resume func(), during *int) func() error {
		h := coldstart.ResumeAfterFirst(lambda.NewHandler(func(context.Context) (string, error) {
			*during = gcPercent()
			return "ok", nil
		}), resume)
		return func() error { _, err := h.Invoke(context.Background(), []byte(`{}`)); return err }
	},
	"a handler function": func(resume func(), during *int) func() error {
		f := coldstart.ResumeAfterFirstFunc(func(context.Context, struct{}) (string, error) {
			*during = gcPercent()
			return "ok", nil
		}, resume)
		return func() error { _, err := f(context.Background(), struct{}{}); return err }
	},
}

func TestCollectionIsOffUntilTheFirstAnswer(t *testing.T) {
	for name, wrap := range wrappers {
		t.Run(name, func(t *testing.T) { testCollectionIsOffUntilTheFirstAnswer(t, wrap) })
	}
}

func testCollectionIsOffUntilTheFirstAnswer(t *testing.T, wrap func(resume func(), during *int) func() error) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	limit := debug.SetMemoryLimit(-1)

	resume := coldstart.PauseGC(256)
	if got := debug.SetMemoryLimit(-1); got != 128<<20 {
		t.Errorf("memory limit while paused = %d, want half of 256 MiB", got)
	}
	var during int
	invoke := wrap(resume, &during)
	if err := invoke(); err != nil {
		t.Fatal(err)
	}
	if during != -1 {
		t.Errorf("GC percent during the first invocation = %d, want -1 (off)", during)
	}
	if got := gcPercent(); got != -1 {
		t.Errorf("GC percent after the first answer = %d, want -1 until the next invocation", got)
	}
	invoke()
	if during != 100 {
		t.Errorf("GC percent during the second invocation = %d, want 100 restored", during)
	}
	if got := debug.SetMemoryLimit(-1); got != limit {
		t.Errorf("memory limit after the first answer = %d, want %d restored", got, limit)
	}
	// Later invocations leave the settings alone.
	debug.SetGCPercent(50)
	invoke()
	if got := gcPercent(); got != 50 {
		t.Errorf("a third invocation changed GC percent to %d", got)
	}
}

// gcPercent returns the GC percent without changing it.
func gcPercent() int {
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	return p
}

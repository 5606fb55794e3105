package later_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/lambdatest"
	"github.com/switchboard-dev/switchboard/shared/later"
)

// TestHeldWorkFinishesBeforeTheEnvironmentMayFreeze runs a bootstrap whose
// work after the answer waits for the test's signal: the answer arrives at
// once, and, when the queue holds the environment, the invocation settles
// (Lambda may freeze it) only after the work is done; without the hold it
// settles with the work still pending, which is what Hold prevents.
func TestHeldWorkFinishesBeforeTheEnvironmentMayFreeze(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "bootstrap")
	if err := lambdatest.Build("./testdata/after", bin); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		hold bool
	}{{"held", true}, {"not held", false}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			rt := lambdatest.NewRuntime(nil)
			defer rt.Close()
			env := []string{"AFTER_DIR=" + dir}
			if tc.hold {
				env = append(env, "AFTER_HOLD=1")
			}
			p, err := lambdatest.Start(rt, bin, env)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Stop()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			for range 2 { // the second invocation shows the first one's hold ended
				os.Remove(filepath.Join(dir, "go"))
				res, err := p.Invoke(ctx, []byte(`{"n":1}`))
				if err != nil || res.Error != nil {
					t.Fatalf("invoke: %v %v", err, res)
				}
				done := filepath.Join(dir, "done-"+res.RequestID)
				// The work waits for the go file: the answer came without it.
				select {
				case <-res.Settled():
					if tc.hold {
						t.Fatal("the invocation settled while its work was still waiting")
					}
				case <-time.After(100 * time.Millisecond):
					if !tc.hold {
						t.Fatal("the invocation did not settle at its answer, with no hold")
					}
				}
				if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o600); err != nil {
					t.Fatal(err)
				}
				select {
				case <-res.Settled():
				case <-ctx.Done():
					t.Fatalf("the invocation never settled; output:\n%s", p.Output())
				}
				_, err = os.Stat(done)
				if tc.hold && err != nil {
					t.Errorf("settled before the work was done: %v", err)
				}
				if !tc.hold {
					waitFor(t, ctx, done) // let it finish before the next round
				}
			}
		})
	}
}

func waitFor(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s never appeared", path)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func TestWaitWaitsForQueuedWork(t *testing.T) {
	q := later.New()
	release := make(chan struct{})
	var finished bool
	q.Go(context.Background(), time.Minute, func(ctx context.Context) {
		<-release
		finished = true
	})
	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := q.Wait(short); err == nil {
		t.Fatal("Wait returned while work was blocked")
	}
	close(release)
	if err := q.Wait(context.Background()); err != nil || !finished {
		t.Fatalf("Wait = %v, finished %v", err, finished)
	}
}

func TestWorkIsBoundedByTheInvocationsDeadline(t *testing.T) {
	q := later.New()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	got := make(chan time.Time, 1)
	q.Go(ctx, time.Hour, func(wctx context.Context) {
		d, _ := wctx.Deadline()
		got <- d
	})
	want, _ := ctx.Deadline()
	cancel() // the invocation's own cancellation does not stop the work
	if d := <-got; !d.Equal(want) {
		t.Errorf("work deadline %v, want the invocation's %v", d, want)
	}
}

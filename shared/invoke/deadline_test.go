package invoke

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestALazyDeadlineEndsTheContextAsWithDeadlineDoes(t *testing.T) {
	const soon = 50 * time.Millisecond
	closes := func(t *testing.T, done <-chan struct{}) {
		t.Helper()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("Done did not close")
		}
	}
	t.Run("past the deadline Err says so though nothing waited", func(t *testing.T) {
		ctx, cancel := withLazyDeadline(context.Background(), time.Now().Add(soon))
		defer cancel()
		if err := ctx.Err(); err != nil {
			t.Fatalf("Err before the deadline = %v", err)
		}
		time.Sleep(2 * soon)
		if err := ctx.Err(); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Err past the deadline = %v", err)
		}
		closes(t, ctx.Done())
	})
	t.Run("Done closes at the deadline", func(t *testing.T) {
		start := time.Now()
		ctx, cancel := withLazyDeadline(context.Background(), start.Add(soon))
		defer cancel()
		closes(t, ctx.Done())
		if time.Since(start) < soon || !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			t.Errorf("Done closed after %v with %v", time.Since(start), ctx.Err())
		}
	})
	t.Run("the parent's end ends it", func(t *testing.T) {
		parent, end := context.WithCancel(context.Background())
		ctx, cancel := withLazyDeadline(parent, time.Now().Add(time.Hour))
		defer cancel()
		done := ctx.Done()
		end()
		closes(t, done)
		if !errors.Is(ctx.Err(), context.Canceled) {
			t.Errorf("Err = %v, want cancelled", ctx.Err())
		}
	})
	t.Run("cancel ends it, before or after a wait", func(t *testing.T) {
		ctx, cancel := withLazyDeadline(context.Background(), time.Now().Add(time.Hour))
		cancel()
		if !errors.Is(ctx.Err(), context.Canceled) {
			t.Errorf("Err = %v, want cancelled", ctx.Err())
		}
		closes(t, ctx.Done())
		ctx, cancel = withLazyDeadline(context.Background(), time.Now().Add(time.Hour))
		done := ctx.Done()
		cancel()
		closes(t, done)
	})
	t.Run("a context derived from it ends at its deadline, with its cause", func(t *testing.T) {
		ctx, cancel := withLazyDeadline(context.Background(), time.Now().Add(soon))
		defer cancel()
		child, stop := context.WithCancel(ctx)
		defer stop()
		closes(t, child.Done())
		if !errors.Is(context.Cause(child), context.DeadlineExceeded) {
			t.Errorf("the child's cause = %v, want the deadline", context.Cause(child))
		}
	})
	t.Run("the deadline is the sooner of its own and its parent's", func(t *testing.T) {
		d := time.Now().Add(time.Hour)
		parent, end := context.WithDeadline(context.Background(), d)
		defer end()
		for _, own := range []time.Time{d.Add(time.Minute), d.Add(-time.Minute)} {
			want := own
			if d.Before(own) {
				want = d
			}
			ctx, cancel := withLazyDeadline(parent, own)
			if got, ok := ctx.Deadline(); !ok || !got.Equal(want) {
				t.Errorf("Deadline() = %v, %v; own %v, parent's %v", got, ok, own, d)
			}
			cancel()
		}
	})
}

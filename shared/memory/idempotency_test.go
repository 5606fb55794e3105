package memory_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/memory"
	"github.com/switchboard-dev/switchboard/shared/store"
)

func testIdempotentRetry(t *testing.T, tbl store.Table) {
	ctx := context.Background()
	svc, c := memory.New(tbl, nil), newCaller(t, tbl)
	id := mustCreate(t, svc, c, "conv-idem")
	mustAdd(t, svc, c, id, 2)
	in := memory.AddMessageInput{ConversationID: id, Role: "user", Content: "book the table for eight", IdempotencyKey: "3f0c9a52-7d1e-4b8e-9f4a-0e6c1d2b5a77"}
	first, err := svc.AddMessage(ctx, c, in)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 { // the client never saw the answer, and retries
		again, err := svc.AddMessage(ctx, c, in)
		if err != nil {
			t.Fatalf("retry: %v", err)
		}
		if want := (memory.AddMessageOutput{Status: "success", ConversationID: id, Seq: first.Seq, Replayed: true}); again != want {
			t.Errorf("retry = %+v, want %+v", again, want)
		}
	}
	all, err := svc.GetAllMessages(ctx, c, memory.GetAllMessagesInput{ConversationID: id})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Messages) != 3 || first.Seq != 3 || first.Replayed {
		t.Errorf("after one add and three retries: first %+v, messages %v; want the message once, at seq 3", first, seqs(all.Messages))
	}
	// Another key, or no key, adds the same text again: that is the caller's wish.
	for _, key := range []string{"other-key", ""} {
		in.IdempotencyKey = key
		if out, err := svc.AddMessage(ctx, c, in); err != nil || out.Replayed {
			t.Errorf("with key %q: %+v, %v; want a new message", key, out, err)
		}
	}
}

func testIdempotencyConflict(t *testing.T, tbl store.Table) {
	ctx := context.Background()
	svc, c := memory.New(tbl, nil), newCaller(t, tbl)
	id := mustCreate(t, svc, c, "conv-idem")
	if _, err := svc.AddMessage(ctx, c, memory.AddMessageInput{ConversationID: id, Role: "user", Content: "first", IdempotencyKey: "k1"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		in   memory.AddMessageInput
		kind fault.Kind
	}{
		{"other content under a used key is a conflict", memory.AddMessageInput{ConversationID: id, Role: "user", Content: "second", IdempotencyKey: "k1"}, fault.KindConflict},
		{"another role under a used key is a conflict", memory.AddMessageInput{ConversationID: id, Role: "assistant", Content: "first", IdempotencyKey: "k1"}, fault.KindConflict},
		{"a key with a space is invalid", memory.AddMessageInput{ConversationID: id, Role: "user", Content: "x", IdempotencyKey: "my key"}, fault.KindInvalid},
		{"a key with a control character is invalid", memory.AddMessageInput{ConversationID: id, Role: "user", Content: "x", IdempotencyKey: "k\x1b[2J"}, fault.KindInvalid},
		{"a key beyond ASCII is invalid", memory.AddMessageInput{ConversationID: id, Role: "user", Content: "x", IdempotencyKey: "clé"}, fault.KindInvalid},
		{"a key over 255 characters is invalid", memory.AddMessageInput{ConversationID: id, Role: "user", Content: "x", IdempotencyKey: strings.Repeat("k", memory.MaxIdempotencyKeyChars+1)}, fault.KindInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := svc.AddMessage(ctx, c, tc.in)
			wantKind(t, err, tc.kind, "idempotency_key")
		})
	}
	all, _ := svc.GetAllMessages(ctx, c, memory.GetAllMessagesInput{ConversationID: id})
	if len(all.Messages) != 1 {
		t.Errorf("refused adds stored messages: %v", seqs(all.Messages))
	}
	// The longest key is accepted.
	if _, err := svc.AddMessage(ctx, c, memory.AddMessageInput{ConversationID: id, Role: "user", Content: "x", IdempotencyKey: strings.Repeat("~", memory.MaxIdempotencyKeyChars)}); err != nil {
		t.Errorf("a key of %d characters: %v", memory.MaxIdempotencyKeyChars, err)
	}
}

func testConcurrentIdempotentAdds(t *testing.T, tbl store.Table) {
	ctx := context.Background()
	svc, c := memory.New(tbl, nil), newCaller(t, tbl)
	id := mustCreate(t, svc, c, "conv-idem")
	const callers = 12
	outs := make([]memory.AddMessageOutput, callers)
	errs := make([]error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			outs[i], errs[i] = svc.AddMessage(ctx, c, memory.AddMessageInput{ConversationID: id, Role: "user", Content: "once", IdempotencyKey: "retry-storm"})
		})
	}
	wg.Wait()
	added := 0
	for i := range callers {
		if errs[i] != nil {
			t.Fatalf("caller %d: %v", i, errs[i])
		}
		if outs[i].Seq != 1 {
			t.Errorf("caller %d got seq %d, want 1", i, outs[i].Seq)
		}
		if !outs[i].Replayed {
			added++
		}
	}
	all, _ := svc.GetAllMessages(ctx, c, memory.GetAllMessagesInput{ConversationID: id})
	if added != 1 || len(all.Messages) != 1 {
		t.Errorf("%d callers added, %d messages stored; want exactly one of each", added, len(all.Messages))
	}
}

func testIdempotencyForgotten(t *testing.T, tbl store.Table) {
	ctx := context.Background()
	c := newCaller(t, tbl)
	in := memory.AddMessageInput{ConversationID: "conv-idem", Role: "user", Content: "hello", IdempotencyKey: "k"}
	t.Run("a conversation created anew does not know its predecessor's keys", func(t *testing.T) {
		svc := memory.New(tbl, nil)
		mustCreate(t, svc, c, in.ConversationID)
		mustAdd(t, svc, c, in.ConversationID, 2)
		if _, err := svc.AddMessage(ctx, c, in); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Delete(ctx, c, memory.DeleteInput{ConversationID: in.ConversationID, Confirm: true}); err != nil {
			t.Fatal(err)
		}
		mustCreate(t, svc, c, in.ConversationID)
		out, err := svc.AddMessage(ctx, c, in)
		if err != nil || out.Replayed || out.Seq != 1 {
			t.Errorf("after delete and create: %+v, %v; want a new message at seq 1", out, err)
		}
	})
	t.Run("a key is remembered for IdempotencyTTL", func(t *testing.T) {
		// A service whose clock is IdempotencyTTL behind writes records
		// that have already lapsed by the table's clock.
		past := memory.New(tbl, &memory.Options{Now: func() time.Time { return time.Now().Add(-memory.IdempotencyTTL) }})
		in := in
		in.IdempotencyKey = "lapsed"
		first, err := past.AddMessage(ctx, c, in)
		if err != nil {
			t.Fatal(err)
		}
		again, err := memory.New(tbl, nil).AddMessage(ctx, c, in)
		if err != nil || again.Replayed || again.Seq != first.Seq+1 {
			t.Errorf("after the key lapsed: %+v, %v; want a new message at seq %d", again, err, first.Seq+1)
		}
	})
}

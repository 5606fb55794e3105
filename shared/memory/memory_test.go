package memory_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/elicit"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/memory"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// newCaller returns a caller in a tenant of its own, so that tests sharing a
// DynamoDB table never see each other's data.
func newCaller(t *testing.T, tbl store.Table) tenant.Caller {
	pk := storetest.NewPrefix(t, tbl)
	return tenant.Caller{Tenant: strings.ReplaceAll(strings.TrimPrefix(pk, "test#"), "#", ""), Principal: "tester"}
}

func mustCreate(t *testing.T, svc *memory.Service, c tenant.Caller, id string) string {
	t.Helper()
	out, err := svc.GetOrCreate(context.Background(), c, memory.GetOrCreateInput{ConversationID: id})
	if err != nil {
		t.Fatalf("GetOrCreate(%q): %v", id, err)
	}
	return out.ConversationID
}

func mustAdd(t *testing.T, svc *memory.Service, c tenant.Caller, id string, n int) {
	t.Helper()
	for i := 1; i <= n; i++ {
		role := "user"
		if i%2 == 0 {
			role = "assistant"
		}
		if _, err := svc.AddMessage(context.Background(), c, memory.AddMessageInput{
			ConversationID: id, Role: role, Content: fmt.Sprintf("Message %d talks about topic %d.", i, i%3),
		}); err != nil {
			t.Fatalf("AddMessage #%d: %v", i, err)
		}
	}
}

func wantKind(t *testing.T, err error, kind fault.Kind, field string) {
	t.Helper()
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Kind != kind || fe.Field != field {
		t.Fatalf("error = %v, want kind %s on field %q", err, kind, field)
	}
}

func seqs(msgs []memory.Message) []int64 {
	out := make([]int64, len(msgs))
	for i, m := range msgs {
		out[i] = m.Seq
	}
	return out
}

func span(from, to int64) []int64 {
	var out []int64
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

func TestMemory(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		for _, tc := range []struct {
			name string
			fn   func(t *testing.T, tbl store.Table)
		}{
			{"GetOrCreateGeneratesAnIDAndIsIdempotent", testGetOrCreate},
			{"InvalidInputIsRejectedAndChangesNothing", testInvalidInput},
			{"AMissingConversationIsNotFound", testMissing},
			{"CompressionKeepsSixRecentAndNeverLosesHistory", testCompression},
			{"AFailingSummariserNeverLosesAMessage", testSummariserFailure},
			{"TheContextHoldsEveryMessageAfterTheSummary", testContextWindow},
			{"ASummaryCoveringTheNewestLeavesSixInTheContext", testContextBelowSummary},
			{"SetSummaryAccumulates", testSetSummary},
			{"GetOrCreateSummaryCreatesFromOldMessages", testGetOrCreateSummary},
			{"ClearRemovesMessagesAndKeepsTheConversation", testClear},
			{"DeleteRemovesEverything", testDelete},
			{"DeleteAsksThoseWhoCanBeAskedFirst", testDeleteAsksFirst},
			{"GetAllMessagesPaginates", testPagination},
			{"TenantsNeverSeeEachOther", testTenants},
			{"HundredConcurrentAddsLoseNothing", testConcurrentAdds},
			{"ARetryWithItsIdempotencyKeyAddsNothing", testIdempotentRetry},
			{"AnIdempotencyKeyNeverCoversAnotherMessage", testIdempotencyConflict},
			{"ConcurrentRetriesWithOneKeyAddOneMessage", testConcurrentIdempotentAdds},
			{"IdempotencyKeysAreForgottenWithTheConversationAndInTime", testIdempotencyForgotten},
		} {
			t.Run(tc.name, func(t *testing.T) { tc.fn(t, tbl) })
		}
	})
}

func testGetOrCreate(t *testing.T, tbl store.Table) {
	ctx := context.Background()
	svc, c := memory.New(tbl, nil), newCaller(t, tbl)
	out, err := svc.GetOrCreate(ctx, c, memory.GetOrCreateInput{})
	if err != nil || !out.Created || !strings.HasPrefix(out.ConversationID, "chat_") {
		t.Fatalf("GetOrCreate() = %+v, %v; want a created chat_ id", out, err)
	}
	again, err := svc.GetOrCreate(ctx, c, memory.GetOrCreateInput{ConversationID: out.ConversationID})
	if err != nil || again.Created || again.ConversationID != out.ConversationID {
		t.Fatalf("GetOrCreate(existing) = %+v, %v; want the same id, not created", again, err)
	}
	named, err := svc.GetOrCreate(ctx, c, memory.GetOrCreateInput{ConversationID: "chat_xxx"})
	if err != nil || !named.Created || named.ConversationID != "chat_xxx" {
		t.Fatalf("GetOrCreate(chat_xxx) = %+v, %v", named, err)
	}
	refs, _, err := svc.ListConversations(ctx, c, "")
	if err != nil || len(refs) != 2 {
		t.Fatalf("ListConversations = %v, %v; want 2", refs, err)
	}
}

func testInvalidInput(t *testing.T, tbl store.Table) {
	ctx := context.Background()
	svc, c := memory.New(tbl, nil), newCaller(t, tbl)
	id := mustCreate(t, svc, c, "conv-1")
	for _, tc := range []struct {
		name  string
		call  func() error
		field string
	}{
		{"IDWithHash", func() error {
			_, err := svc.GetOrCreate(ctx, c, memory.GetOrCreateInput{ConversationID: "a#b"})
			return err
		}, "conversation_id"},
		{"IDWithSlash", func() error {
			_, err := svc.AddMessage(ctx, c, memory.AddMessageInput{ConversationID: "../x", Role: "user", Content: "x"})
			return err
		}, "conversation_id"},
		{"IDTooLong", func() error {
			_, err := svc.GetContext(ctx, c, memory.GetContextInput{ConversationID: strings.Repeat("a", 129)})
			return err
		}, "conversation_id"},
		{"UnknownRole", func() error {
			_, err := svc.AddMessage(ctx, c, memory.AddMessageInput{ConversationID: id, Role: "robot", Content: "x"})
			return err
		}, "role"},
		{"EmptyContent", func() error {
			_, err := svc.AddMessage(ctx, c, memory.AddMessageInput{ConversationID: id, Role: "user", Content: "  \n"})
			return err
		}, "content"},
		{"HugeContent", func() error {
			_, err := svc.AddMessage(ctx, c, memory.AddMessageInput{ConversationID: id, Role: "user", Content: strings.Repeat("é", memory.MaxContentChars+1)})
			return err
		}, "content"},
		{"ContextWindowTooLarge", func() error {
			_, err := svc.GetContext(ctx, c, memory.GetContextInput{ConversationID: id, MaxMessages: memory.MaxContextMessages + 1})
			return err
		}, "max_messages"},
		{"UnknownLanguage", func() error {
			_, err := svc.GetOrCreateSummary(ctx, c, memory.GetOrCreateSummaryInput{ConversationID: id, Language: "fr"})
			return err
		}, "language"},
		{"BadOldMessage", func() error {
			_, err := svc.GetOrCreateSummary(ctx, c, memory.GetOrCreateSummaryInput{ConversationID: id,
				OldMessages: []memory.MessageInput{{Role: "user", Content: "ok"}, {Role: "alien", Content: "x"}}})
			return err
		}, "old_messages[1].role"},
		{"OldMessagesTooLongInAll", func() error {
			long := memory.MessageInput{Role: "user", Content: strings.Repeat("y", memory.MaxContentChars)}
			_, err := svc.GetOrCreateSummary(ctx, c, memory.GetOrCreateSummaryInput{ConversationID: id,
				OldMessages: slices.Repeat([]memory.MessageInput{long}, memory.MaxOldMessagesChars/memory.MaxContentChars+1)})
			return err
		}, "old_messages"},
		{"UnknownSummaryMode", func() error {
			_, err := svc.SetSummary(ctx, c, memory.SetSummaryInput{ConversationID: id, Summary: "s", Mode: "merge"})
			return err
		}, "mode"},
		{"ForeignCursor", func() error {
			_, err := svc.GetAllMessages(ctx, c, memory.GetAllMessagesInput{ConversationID: id, Cursor: store.EncodeCursor("meta")})
			return err
		}, "cursor"},
	} {
		t.Run(tc.name, func(t *testing.T) { wantKind(t, tc.call(), fault.KindInvalid, tc.field) })
	}
	all, err := svc.GetAllMessages(ctx, c, memory.GetAllMessagesInput{ConversationID: id})
	if err != nil || len(all.Messages) != 0 {
		t.Fatalf("after rejected calls the conversation holds %v (%v), want nothing", all.Messages, err)
	}
	sum, _ := svc.GetSummary(ctx, c, memory.ConversationInput{ConversationID: id})
	if sum.Summary != "" {
		t.Fatalf("after rejected calls the summary is %q", sum.Summary)
	}
}

func testMissing(t *testing.T, tbl store.Table) {
	ctx := context.Background()
	svc, c := memory.New(tbl, nil), newCaller(t, tbl)
	in := memory.ConversationInput{ConversationID: "never-made"}
	for name, call := range map[string]func() error{
		"AddMessage": func() error {
			_, err := svc.AddMessage(ctx, c, memory.AddMessageInput{ConversationID: in.ConversationID, Role: "user", Content: "x"})
			return err
		},
		"GetContext": func() error {
			_, err := svc.GetContext(ctx, c, memory.GetContextInput{ConversationID: in.ConversationID})
			return err
		},
		"GetAllMessages": func() error {
			_, err := svc.GetAllMessages(ctx, c, memory.GetAllMessagesInput{ConversationID: in.ConversationID})
			return err
		},
		"GetOldMessages": func() error { _, err := svc.GetOldMessages(ctx, c, in); return err },
		"GetSummary":     func() error { _, err := svc.GetSummary(ctx, c, in); return err },
		"SetSummary": func() error {
			_, err := svc.SetSummary(ctx, c, memory.SetSummaryInput{ConversationID: in.ConversationID, Summary: "x"})
			return err
		},
		"GetOrCreateSummary": func() error {
			_, err := svc.GetOrCreateSummary(ctx, c, memory.GetOrCreateSummaryInput{ConversationID: in.ConversationID})
			return err
		},
		"Clear": func() error { _, err := svc.Clear(ctx, c, in); return err },
		"Delete": func() error {
			_, err := svc.Delete(ctx, c, memory.DeleteInput{ConversationID: in.ConversationID})
			return err
		},
		"Conversation": func() error { _, err := svc.Conversation(ctx, c, in.ConversationID); return err },
	} {
		t.Run(name, func(t *testing.T) {
			err := call()
			wantKind(t, err, fault.KindNotFound, "")
			if !strings.Contains(err.Error(), `"never-made"`) || !strings.Contains(err.Error(), "memory_get_or_create") {
				t.Errorf("error %q should name the conversation and how to create it", err)
			}
		})
	}
}

func testCompression(t *testing.T, tbl store.Table) {
	ctx := context.Background()
	svc, c := memory.New(tbl, nil), newCaller(t, tbl)
	id := mustCreate(t, svc, c, "")
	for _, step := range []struct {
		total       int
		wantThrough int64
		wantOld     []int64
	}{
		{total: 10, wantThrough: 0, wantOld: span(1, 4)},
		{total: 11, wantThrough: 5, wantOld: nil},
		{total: 15, wantThrough: 5, wantOld: span(6, 9)},
		{total: 16, wantThrough: 10, wantOld: nil},
		{total: 40, wantThrough: 30, wantOld: span(31, 34)},
	} {
		have, _ := svc.GetOldMessages(ctx, c, memory.ConversationInput{ConversationID: id})
		for i := have.TotalCount + 1; i <= int64(step.total); i++ {
			if _, err := svc.AddMessage(ctx, c, memory.AddMessageInput{ConversationID: id, Role: "user", Content: fmt.Sprintf("Fact number %d is about caching.", i)}); err != nil {
				t.Fatal(err)
			}
		}
		sum, err := svc.GetSummary(ctx, c, memory.ConversationInput{ConversationID: id})
		if err != nil {
			t.Fatal(err)
		}
		if sum.Through != step.wantThrough {
			t.Errorf("after %d messages the summary covers through %d, want %d", step.total, sum.Through, step.wantThrough)
		}
		if step.wantThrough > 0 && (sum.Summary == "" || sum.Provider != "offline" || sum.Model == "") {
			t.Errorf("after %d messages summary = %+v, want offline text", step.total, sum)
		}
		old, err := svc.GetOldMessages(ctx, c, memory.ConversationInput{ConversationID: id})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(step.wantOld, seqs(old.Messages), cmpopts.EquateEmpty()); diff != "" || old.TotalCount != int64(step.total) {
			t.Errorf("after %d messages old messages mismatch (-want +got):\n%s total %d", step.total, diff, old.TotalCount)
		}
		window, err := svc.GetContext(ctx, c, memory.GetContextInput{ConversationID: id})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(span(min(step.wantThrough+1, int64(step.total)-5), int64(step.total)), seqs(window.Messages)); diff != "" || window.Summary != sum.Summary || window.Omitted != 0 {
			t.Errorf("after %d messages the context window mismatch (-want +got):\n%s", step.total, diff)
		}
		all, err := svc.GetAllMessages(ctx, c, memory.GetAllMessagesInput{ConversationID: id})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(span(1, int64(step.total)), seqs(all.Messages)); diff != "" {
			t.Errorf("after %d messages the full history mismatch (-want +got):\n%s", step.total, diff)
		}
	}
	// The summary accumulates: one paragraph per compression.
	sum, _ := svc.GetSummary(ctx, c, memory.ConversationInput{ConversationID: id})
	if n := strings.Count(sum.Summary, "\n\n"); n < 2 {
		t.Errorf("summary after several compressions has %d paragraph breaks, want several:\n%s", n, sum.Summary)
	}
	window, _ := svc.GetContext(ctx, c, memory.GetContextInput{ConversationID: id, MaxMessages: 20})
	if diff := cmp.Diff(span(31, 40), seqs(window.Messages)); diff != "" {
		t.Errorf("GetContext(max 20) mismatch (-want +got):\n%s", diff)
	}
}

// testContextWindow is issue 10's 13-message chat: the summary covers 1..5,
// so the context must hold 6..13, not only the 6 newest.
func testContextWindow(t *testing.T, tbl store.Table) {
	ctx := context.Background()
	svc, c := memory.New(tbl, nil), newCaller(t, tbl)
	id := mustCreate(t, svc, c, "")
	mustAdd(t, svc, c, id, 13)
	stuck := mustCreate(t, svc, c, "")
	failing := memory.New(tbl, &memory.Options{Summarizer: failingSummarizer{}})
	mustAdd(t, failing, c, stuck, 25)
	for _, tc := range []struct {
		name        string
		in          memory.GetContextInput
		want        []int64
		wantOmitted int64
	}{
		{"ByDefaultEveryMessageAfterTheSummary", memory.GetContextInput{ConversationID: id}, span(6, 13), 0},
		{"AWindowOfExactlyTheMissingMessagesOmitsNothing", memory.GetContextInput{ConversationID: id, MaxMessages: 8}, span(6, 13), 0},
		{"MaxMessagesKeepsTheNewestAndCountsTheRest", memory.GetContextInput{ConversationID: id, MaxMessages: 6}, span(8, 13), 2},
		{"ALargerWindowAddsNothingTheSummaryCovers", memory.GetContextInput{ConversationID: id, MaxMessages: 50}, span(6, 13), 0},
		{"WithoutASummaryTheDefaultCapCountsWhatItLeftOut", memory.GetContextInput{ConversationID: stuck}, span(6, 25), 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := svc.GetContext(ctx, c, tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, seqs(got.Messages)); diff != "" || got.Omitted != tc.wantOmitted {
				t.Errorf("messages mismatch (-want +got):\n%s omitted %d, want %d", diff, got.Omitted, tc.wantOmitted)
			}
		})
	}
	sum, _ := svc.GetSummary(ctx, c, memory.ConversationInput{ConversationID: id})
	if sum.Through != 5 {
		t.Errorf("the 13-message chat's summary covers through %d, want 5", sum.Through)
	}
}

type failingSummarizer struct{}

func (failingSummarizer) Summarize(context.Context, provider.SummarizeRequest) (provider.Summary, error) {
	return provider.Summary{}, errors.New("model unavailable")
}

func testSummariserFailure(t *testing.T, tbl store.Table) {
	ctx := context.Background()
	svc, c := memory.New(tbl, &memory.Options{Summarizer: failingSummarizer{}}), newCaller(t, tbl)
	id := mustCreate(t, svc, c, "")
	mustAdd(t, svc, c, id, 12)
	all, _ := svc.GetAllMessages(ctx, c, memory.GetAllMessagesInput{ConversationID: id})
	if len(all.Messages) != 12 {
		t.Fatalf("stored %d messages with a failing summariser, want 12", len(all.Messages))
	}
	old, _ := svc.GetOldMessages(ctx, c, memory.ConversationInput{ConversationID: id})
	if diff := cmp.Diff(span(1, 6), seqs(old.Messages)); diff != "" {
		t.Errorf("old messages after failed compression mismatch (-want +got):\n%s", diff)
	}
	// Once the summariser recovers, the next add catches up.
	ok := memory.New(tbl, nil)
	mustAdd(t, ok, c, id, 1)
	sum, _ := ok.GetSummary(ctx, c, memory.ConversationInput{ConversationID: id})
	if sum.Through != 7 {
		t.Errorf("after recovery the summary covers through %d, want 7", sum.Through)
	}
}

func testSetSummary(t *testing.T, tbl store.Table) {
	ctx := context.Background()
	svc, c := memory.New(tbl, nil), newCaller(t, tbl)
	id := mustCreate(t, svc, c, "")
	for _, step := range []struct {
		in   memory.SetSummaryInput
		want string
	}{
		{memory.SetSummaryInput{Summary: "Summary 1"}, "Summary 1"},
		{memory.SetSummaryInput{Summary: "Summary 2"}, "Summary 1\n\nSummary 2"},
		// A seed-style client sends the text it accumulated itself.
		{memory.SetSummaryInput{Summary: "Summary 1\n\nSummary 2\n\nSummary 3"}, "Summary 1\n\nSummary 2\n\nSummary 3"},
		{memory.SetSummaryInput{Summary: "Fresh start", Mode: "replace"}, "Fresh start"},
	} {
		step.in.ConversationID = id
		out, err := svc.SetSummary(ctx, c, step.in)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := svc.GetSummary(ctx, c, memory.ConversationInput{ConversationID: id})
		if out.Summary != step.want || got.Summary != step.want || got.Provider != "client" {
			t.Errorf("SetSummary(%q) stored %q (returned %q, provider %q), want %q", step.in.Summary, got.Summary, out.Summary, got.Provider, step.want)
		}
	}
}

func testGetOrCreateSummary(t *testing.T, tbl store.Table) {
	ctx := context.Background()
	svc, c := memory.New(tbl, nil), newCaller(t, tbl)
	id := mustCreate(t, svc, c, "")
	empty, err := svc.GetOrCreateSummary(ctx, c, memory.GetOrCreateSummaryInput{ConversationID: id})
	if err != nil || empty.Summary != "" || empty.Created {
		t.Fatalf("GetOrCreateSummary on an empty conversation = %+v, %v; want nothing to summarise", empty, err)
	}
	mustAdd(t, svc, c, id, 9) // below the threshold: 1..3 are old
	got, err := svc.GetOrCreateSummary(ctx, c, memory.GetOrCreateSummaryInput{ConversationID: id, Language: "vi"})
	if err != nil || !got.Created || got.Summary == "" || got.Through != 3 || got.Provider != "offline" {
		t.Fatalf("GetOrCreateSummary = %+v, %v; want a created offline summary through 3", got, err)
	}
	again, err := svc.GetOrCreateSummary(ctx, c, memory.GetOrCreateSummaryInput{ConversationID: id})
	if err != nil || again.Created || again.Summary != got.Summary {
		t.Fatalf("second GetOrCreateSummary = %+v, %v; want the stored one", again, err)
	}
	old, _ := svc.GetOldMessages(ctx, c, memory.ConversationInput{ConversationID: id})
	if len(old.Messages) != 0 {
		t.Errorf("old messages after summarising = %v, want none", seqs(old.Messages))
	}
	// Given messages are summarised as given.
	id2 := mustCreate(t, svc, c, "")
	given, err := svc.GetOrCreateSummary(ctx, c, memory.GetOrCreateSummaryInput{ConversationID: id2,
		OldMessages: []memory.MessageInput{{Role: "user", Content: "How do I floss with braces?"}, {Role: "assistant", Content: "Use a threader."}}})
	if err != nil || !given.Created || !strings.Contains(given.Summary, "floss") {
		t.Fatalf("GetOrCreateSummary(old_messages) = %+v, %v", given, err)
	}
}

func testClear(t *testing.T, tbl store.Table) {
	ctx := context.Background()
	svc, c := memory.New(tbl, nil), newCaller(t, tbl)
	id := mustCreate(t, svc, c, "")
	mustAdd(t, svc, c, id, 12)
	out, err := svc.Clear(ctx, c, memory.ConversationInput{ConversationID: id})
	if err != nil || out.Status != "cleared" || out.Removed != 12 {
		t.Fatalf("Clear = %+v, %v", out, err)
	}
	window, err := svc.GetContext(ctx, c, memory.GetContextInput{ConversationID: id})
	if err != nil || len(window.Messages) != 0 || window.Summary != "" {
		t.Fatalf("after Clear the context is %+v, %v; want empty", window, err)
	}
	mustAdd(t, svc, c, id, 2)
	all, _ := svc.GetAllMessages(ctx, c, memory.GetAllMessagesInput{ConversationID: id})
	if diff := cmp.Diff([]int64{13, 14}, seqs(all.Messages)); diff != "" {
		t.Errorf("messages added after Clear mismatch (-want +got):\n%s", diff)
	}
	old, _ := svc.GetOldMessages(ctx, c, memory.ConversationInput{ConversationID: id})
	if old.TotalCount != 2 || len(old.Messages) != 0 {
		t.Errorf("after Clear and 2 adds: total %d, old %v", old.TotalCount, seqs(old.Messages))
	}
}

// testContextBelowSummary is a clear that failed after moving the summary
// past every message and before deleting them: the context still shows the
// KeepRecent newest, as it does for any summary that covers them.
func testContextBelowSummary(t *testing.T, tbl store.Table) {
	ctx := context.Background()
	c := newCaller(t, tbl)
	id := mustCreate(t, memory.New(tbl, nil), c, "")
	mustAdd(t, memory.New(tbl, nil), c, id, 9)
	svc := memory.New(noDeletes{tbl}, nil)
	if _, err := svc.Clear(ctx, c, memory.ConversationInput{ConversationID: id}); err == nil {
		t.Fatal("Clear succeeded without deleting")
	}
	for _, tc := range []struct {
		name string
		in   memory.GetContextInput
		want []int64
	}{
		{"ByDefaultTheSixNewest", memory.GetContextInput{ConversationID: id}, span(4, 9)},
		{"WithASmallerWindowTheNewestItHolds", memory.GetContextInput{ConversationID: id, MaxMessages: 2}, span(8, 9)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := svc.GetContext(ctx, c, tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, seqs(got.Messages)); diff != "" || got.Through != 9 || got.Omitted != 0 {
				t.Errorf("messages mismatch (-want +got):\n%s through %d, omitted %d", diff, got.Through, got.Omitted)
			}
		})
	}
}

// noDeletes is a table whose transactions of deletes alone fail.
type noDeletes struct{ store.Table }

func (n noDeletes) Transact(ctx context.Context, writes ...store.Write) error {
	for _, w := range writes {
		if w.Kind != store.WriteDelete {
			return n.Table.Transact(ctx, writes...)
		}
	}
	return errors.New("deletes are off")
}

func testDeleteAsksFirst(t *testing.T, tbl store.Table) {
	svc, c := memory.New(tbl, nil), newCaller(t, tbl)
	form := []string{elicit.MethodElicit}
	state := &elicit.State{ID: "s1", Once: true}
	answer := func(action string, confirm bool) mcp.InputResponseMap {
		return mcp.InputResponseMap{"confirm": &mcp.ElicitResult{Action: action, Content: map[string]any{"confirm": confirm}}}
	}
	tests := []struct {
		name        string
		round       *elicit.Round
		confirm     bool
		wantAsk     bool
		wantRefusal bool
	}{
		{name: "a client that can show a form is asked", round: &elicit.Round{Can: form}, wantAsk: true},
		{name: "an answer without the question's state is asked again", round: &elicit.Round{Can: form, Responses: answer("accept", true)}, wantAsk: true},
		{name: "a declined question deletes nothing", round: &elicit.Round{Can: form, Responses: answer("decline", false), State: state}, wantRefusal: true},
		{name: "an accepted question left unticked deletes nothing", round: &elicit.Round{Can: form, Responses: answer("accept", false), State: state}, wantRefusal: true},
		{name: "a confirmed question deletes", round: &elicit.Round{Can: form, Responses: answer("accept", true), State: state}},
		{name: "confirm true deletes without asking", round: &elicit.Round{Can: form}, confirm: true},
		{name: "a client without forms is not asked", round: &elicit.Round{Can: []string{elicit.MethodSample}}},
		{name: "a client before protocol 2026-07-28 is not asked", round: nil},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := mustCreate(t, svc, c, fmt.Sprintf("asked-%d", i))
			mustAdd(t, svc, c, id, 3)
			ctx := elicit.NewContext(context.Background(), tt.round)
			out, err := svc.Delete(ctx, c, memory.DeleteInput{ConversationID: id, Confirm: tt.confirm})
			var ask *elicit.InputRequired
			switch {
			case tt.wantAsk:
				if !errors.As(err, &ask) {
					t.Fatalf("Delete = %+v, %v; want a question", out, err)
				}
				msg := ask.Requests["confirm"].(*mcp.ElicitParams).Message
				if !ask.Once || !strings.Contains(msg, id) || !strings.Contains(msg, "3 messages") {
					t.Errorf("asked %q (once: %v), want a single-use question naming %s and its 3 messages", msg, ask.Once, id)
				}
			case tt.wantRefusal:
				wantKind(t, err, fault.KindInvalid, "confirm")
			default:
				if err != nil || out.Status != "deleted" {
					t.Fatalf("Delete = %+v, %v; want it deleted", out, err)
				}
				return
			}
			if _, err := svc.GetContext(context.Background(), c, memory.GetContextInput{ConversationID: id}); err != nil {
				t.Errorf("the conversation is gone, though the deletion was not confirmed: %v", err)
			}
		})
	}
}

func testDelete(t *testing.T, tbl store.Table) {
	ctx := context.Background()
	svc, c := memory.New(tbl, nil), newCaller(t, tbl)
	id := mustCreate(t, svc, c, "doomed")
	mustAdd(t, svc, c, id, 150)
	out, err := svc.Delete(ctx, c, memory.DeleteInput{ConversationID: id})
	if err != nil || out.Status != "deleted" || out.Removed != 150 {
		t.Fatalf("Delete = %+v, %v", out, err)
	}
	_, err = svc.GetContext(ctx, c, memory.GetContextInput{ConversationID: id})
	wantKind(t, err, fault.KindNotFound, "")
	refs, _, _ := svc.ListConversations(ctx, c, "")
	if len(refs) != 0 {
		t.Errorf("after Delete the listing holds %v", refs)
	}
	// The id can be used again, from scratch.
	again, err := svc.GetOrCreate(ctx, c, memory.GetOrCreateInput{ConversationID: id})
	if err != nil || !again.Created {
		t.Fatalf("re-creating a deleted conversation = %+v, %v", again, err)
	}
	mustAdd(t, svc, c, id, 1)
	all, _ := svc.GetAllMessages(ctx, c, memory.GetAllMessagesInput{ConversationID: id})
	if diff := cmp.Diff([]int64{1}, seqs(all.Messages)); diff != "" {
		t.Errorf("re-created conversation mismatch (-want +got):\n%s", diff)
	}
}

func testPagination(t *testing.T, tbl store.Table) {
	ctx := context.Background()
	svc, c := memory.New(tbl, nil), newCaller(t, tbl)
	id := mustCreate(t, svc, c, "")
	mustAdd(t, svc, c, id, 25)
	var got []int64
	in := memory.GetAllMessagesInput{ConversationID: id, Limit: 10}
	for pages := 1; ; pages++ {
		out, err := svc.GetAllMessages(ctx, c, in)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, seqs(out.Messages)...)
		if out.NextCursor == "" {
			if pages != 3 {
				t.Errorf("took %d pages, want 3", pages)
			}
			break
		}
		in.Cursor = out.NextCursor
	}
	if diff := cmp.Diff(span(1, 25), got); diff != "" {
		t.Errorf("paged history mismatch (-want +got):\n%s", diff)
	}
}

func testTenants(t *testing.T, tbl store.Table) {
	ctx := context.Background()
	svc := memory.New(tbl, nil)
	a, b := newCaller(t, tbl), newCaller(t, tbl)
	id := mustCreate(t, svc, a, "shared-name")
	mustAdd(t, svc, a, id, 3)
	if _, err := svc.GetContext(ctx, b, memory.GetContextInput{ConversationID: id}); fault.KindOf(err) != fault.KindNotFound {
		t.Errorf("tenant B reading A's conversation: error = %v, want not found", err)
	}
	if _, err := svc.AddMessage(ctx, b, memory.AddMessageInput{ConversationID: id, Role: "user", Content: "intrude"}); fault.KindOf(err) != fault.KindNotFound {
		t.Errorf("tenant B writing A's conversation: error = %v, want not found", err)
	}
	// B may use the same id for a conversation of its own, which stays apart.
	mustCreate(t, svc, b, "shared-name")
	mustAdd(t, svc, b, id, 1)
	aAll, _ := svc.GetAllMessages(ctx, a, memory.GetAllMessagesInput{ConversationID: id})
	bAll, _ := svc.GetAllMessages(ctx, b, memory.GetAllMessagesInput{ConversationID: id})
	if len(aAll.Messages) != 3 || len(bAll.Messages) != 1 {
		t.Errorf("A holds %d messages and B %d, want 3 and 1", len(aAll.Messages), len(bAll.Messages))
	}
	if _, err := svc.Delete(ctx, b, memory.DeleteInput{ConversationID: id}); err != nil {
		t.Fatal(err)
	}
	aAll, _ = svc.GetAllMessages(ctx, a, memory.GetAllMessagesInput{ConversationID: id})
	if len(aAll.Messages) != 3 {
		t.Errorf("B deleting its own conversation changed A's: %d messages left", len(aAll.Messages))
	}
}

func testConcurrentAdds(t *testing.T, tbl store.Table) {
	const writers = 100
	ctx := context.Background()
	svc, c := memory.New(tbl, nil), newCaller(t, tbl)
	id := mustCreate(t, svc, c, "")
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for i := 0; i < writers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := svc.AddMessage(ctx, c, memory.AddMessageInput{ConversationID: id, Role: "user", Content: fmt.Sprintf("writer %d", i)})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent AddMessage: %v", err)
		}
	}
	all, err := svc.GetAllMessages(ctx, c, memory.GetAllMessagesInput{ConversationID: id})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(span(1, writers), seqs(all.Messages)); diff != "" {
		t.Fatalf("sequence after %d concurrent adds mismatch (-want +got):\n%s", writers, diff)
	}
	seen := map[string]bool{}
	for _, m := range all.Messages {
		if seen[m.Content] {
			t.Fatalf("message %q stored twice", m.Content)
		}
		seen[m.Content] = true
	}
}

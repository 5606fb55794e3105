package memory_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/memory"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
)

func TestAddTurns(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		t.Run("AChatTurnKeepsItsToolFieldsInOrder", func(t *testing.T) {
			ctx := context.Background()
			svc, c := memory.New(tbl, nil), newCaller(t, tbl)
			id := mustCreate(t, svc, c, "chat-1")
			turn := []memory.Turn{
				{Role: "user", Content: "what is the PGA?"},
				{Role: "tool", Content: `{"documents":[{"score":0.1}]}`, ToolCallID: "vs_1", Name: "optimizer_vs-retriever", Internal: true},
				{Role: "assistant", ToolCalls: json.RawMessage(`[{"id":"c1","name":"web_search","arguments":{"query":"pga"}}]`)},
				{Role: "tool", Content: "Title: PGA", ToolCallID: "c1", Name: "web_search"},
				{Role: "assistant", Content: "The PGA is process memory."},
			}
			out, err := svc.AddTurns(ctx, c, id, turn)
			if err != nil || out.Seq != 5 {
				t.Fatalf("AddTurns = %+v, %v; want seq 5", out, err)
			}
			all, err := svc.GetAllMessages(ctx, c, memory.GetAllMessagesInput{ConversationID: id})
			if err != nil {
				t.Fatal(err)
			}
			var got []memory.Turn
			for _, m := range all.Messages {
				got = append(got, memory.Turn{Role: m.Role, Content: m.Content, ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID, Name: m.Name, Internal: m.Internal})
			}
			if diff := cmp.Diff(turn, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("stored turn mismatch (-want +got):\n%s", diff)
			}
		})
		t.Run("InternalMessagesNeverReachTheSummary", func(t *testing.T) {
			ctx := context.Background()
			svc, c := memory.New(tbl, nil), newCaller(t, tbl)
			id := mustCreate(t, svc, c, "chat-2")
			for i := 0; i < 4; i++ {
				if _, err := svc.AddTurns(ctx, c, id, []memory.Turn{
					{Role: "user", Content: "Tell me about rotation of keys."},
					{Role: "tool", Content: "SECRETDOCUMENT passage about zebras.", ToolCallID: "vs", Name: "optimizer_vs-retriever", Internal: true},
					{Role: "assistant", Content: "Keys rotate yearly."},
				}); err != nil {
					t.Fatal(err)
				}
			}
			sum, err := svc.GetSummary(ctx, c, memory.ConversationInput{ConversationID: id})
			if err != nil || sum.Through == 0 {
				t.Fatalf("GetSummary = %+v, %v; want a summary after 12 messages", sum, err)
			}
			if strings.Contains(sum.Summary, "SECRETDOCUMENT") {
				t.Errorf("summary %q holds an internal message", sum.Summary)
			}
		})
		t.Run("ABadTurnChangesNothing", func(t *testing.T) {
			ctx := context.Background()
			svc, c := memory.New(tbl, nil), newCaller(t, tbl)
			id := mustCreate(t, svc, c, "chat-3")
			_, err := svc.AddTurns(ctx, c, id, []memory.Turn{{Role: "user", Content: "hi"}, {Role: "robot", Content: "beep"}})
			wantKind(t, err, fault.KindInvalid, "messages[1].role")
			all, _ := svc.GetAllMessages(ctx, c, memory.GetAllMessagesInput{ConversationID: id})
			if len(all.Messages) != 0 {
				t.Errorf("messages %v after a refused turn, want none", all.Messages)
			}
		})
	})
}

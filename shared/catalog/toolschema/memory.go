package toolschema

import (
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/switchboard-dev/switchboard/shared/memory"
)

func conversationID(p map[string]*jsonschema.Schema) {
	s := p["conversation_id"]
	s.Pattern, s.MaxLength = memory.IDPattern, ptr(128)
}

func messageFields(s *jsonschema.Schema) {
	s.Properties["role"].Enum = []any{"user", "assistant", "system"}
	s.Properties["content"].MinLength, s.Properties["content"].MaxLength = ptr(1), ptr(memory.MaxContentChars)
}

// memorySchemas returns the schemas of the memory family's tools.
func memorySchemas() map[string]pair {
	conv := schemaFor[memory.ConversationInput](conversationID)
	summaryOut := schemaFor[memory.SummaryOutput](nil)
	statusOut := schemaFor[memory.StatusOutput](nil)
	return map[string]pair{
		"memory_get_or_create": {schemaFor[memory.GetOrCreateInput](conversationID), schemaFor[memory.GetOrCreateOutput](nil)},
		"memory_add_message": {schemaFor[memory.AddMessageInput](func(p map[string]*jsonschema.Schema) {
			conversationID(p)
			messageFields(&jsonschema.Schema{Properties: p})
			p["idempotency_key"].Pattern, p["idempotency_key"].MaxLength = memory.IdempotencyKeyPattern, ptr(memory.MaxIdempotencyKeyChars)
		}), schemaFor[memory.AddMessageOutput](nil)},
		"memory_get_context": {schemaFor[memory.GetContextInput](func(p map[string]*jsonschema.Schema) {
			conversationID(p)
			p["max_messages"].Minimum, p["max_messages"].Maximum = ptr(1.0), ptr(float64(memory.MaxContextMessages))
		}), schemaFor[memory.GetContextOutput](nil)},
		"memory_get_all_messages": {schemaFor[memory.GetAllMessagesInput](func(p map[string]*jsonschema.Schema) {
			conversationID(p)
			p["limit"].Minimum, p["limit"].Maximum = ptr(1.0), ptr(float64(memory.MaxPageMessages))
		}), schemaFor[memory.MessagesOutput](nil)},
		"memory_get_old_messages": {conv, schemaFor[memory.OldMessagesOutput](nil)},
		"memory_get_or_create_summary": {schemaFor[memory.GetOrCreateSummaryInput](func(p map[string]*jsonschema.Schema) {
			conversationID(p)
			p["language"].Enum = []any{"en", "vi"}
			p["old_messages"].MaxItems = ptr(memory.MaxOldMessages)
			messageFields(p["old_messages"].Items)
		}), summaryOut},
		"memory_set_summary": {schemaFor[memory.SetSummaryInput](func(p map[string]*jsonschema.Schema) {
			conversationID(p)
			p["summary"].MaxLength = ptr(memory.MaxSummaryChars)
			p["mode"].Enum = []any{"append", "replace"}
		}), schemaFor[memory.SetSummaryOutput](nil)},
		"memory_get_summary": {conv, summaryOut},
		"memory_clear":       {conv, statusOut},
		"memory_delete":      {schemaFor[memory.DeleteInput](conversationID), statusOut},
	}
}

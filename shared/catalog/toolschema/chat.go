package toolschema

import (
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/switchboard-dev/switchboard/shared/chat"
	"github.com/switchboard-dev/switchboard/shared/memory"
)

// chatSchemas returns the schemas of the chat tool.
func chatSchemas() map[string]pair {
	return map[string]pair{
		"chat": {schemaFor[chat.Input](func(p map[string]*jsonschema.Schema) {
			p["message"].MinLength, p["message"].MaxLength = ptr(1), ptr(chat.MaxMessageChars)
			p["thread_id"].Pattern, p["thread_id"].MaxLength = memory.IDPattern, ptr(128)
			p["history"].MaxItems = ptr(chat.MaxHistoryMessages)
			p["temperature"].Minimum, p["temperature"].Maximum = ptr(0.0), ptr(2.0)
			p["max_tokens"].Minimum, p["max_tokens"].Maximum = ptr(1.0), ptr(16384.0)
		}), schemaFor[chat.Output](nil)},
	}
}

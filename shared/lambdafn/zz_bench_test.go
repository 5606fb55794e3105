package lambdafn

import (
	"encoding/json"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/memory"
)

func BenchmarkZZDecode(b *testing.B) {
	tool, _ := catalog.Default().Tool("memory_get_context")
	rs, _ := tool.Input().Resolve(nil)
	args := []byte(`{"conversation_id":"bench-protocol","max_messages":6}`)
	b.Run("any", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v any
			json.Unmarshal(args, &v)
		}
	})
	b.Run("validate", func(b *testing.B) {
		var v any
		json.Unmarshal(args, &v)
		b.ReportAllocs()
		for b.Loop() {
			rs.Validate(v)
		}
	})
	b.Run("typed", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var in memory.GetContextInput
			json.Unmarshal(args, &in)
		}
	})
}

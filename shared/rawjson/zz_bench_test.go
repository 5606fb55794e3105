package rawjson

import (
	"encoding/json"
	"strings"
	"testing"
)

var plainTab = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return
}()

func prefixTable(b []byte) int {
	i := 0
	for ; i+4 <= len(b); i += 4 {
		if !plainTab[b[i]] {
			return i
		}
		if !plainTab[b[i+1]] {
			return i + 1
		}
		if !plainTab[b[i+2]] {
			return i + 2
		}
		if !plainTab[b[i+3]] {
			return i + 3
		}
	}
	for ; i < len(b); i++ {
		if !plainTab[b[i]] {
			return i
		}
	}
	return i
}

func BenchmarkZZPrefix(b *testing.B) {
	msgs := []any{}
	for i := range 6 {
		msgs = append(msgs, map[string]any{"seq": i, "role": "user", "content": strings.Repeat("Message of the benchmark conversation: the user talks about toothbrushes. ", 2), "created_at": "2026-11-25T20:00:00Z"})
	}
	s, _ := json.Marshal(map[string]any{"conversation_id": "bench", "summary": strings.Repeat("summary sentence. ", 30), "messages": msgs})
	q, _ := json.Marshal(string(s))
	for _, data := range [][]byte{s, q} {
		b.Run("swar", func(b *testing.B) {
			for b.Loop() {
				for i := 0; i < len(data); {
					i += PlainPrefix(data[i:], false) + 1
				}
			}
		})
		b.Run("table", func(b *testing.B) {
			for b.Loop() {
				for i := 0; i < len(data); {
					i += prefixTable(data[i:]) + 1
				}
			}
		})
	}
}

package gateway

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/rawjson"
)

func BenchmarkZZScan(b *testing.B) {
	msgs := []any{}
	for i := range 6 {
		msgs = append(msgs, map[string]any{"seq": i, "role": "user", "content": strings.Repeat("Message of the benchmark conversation: the user talks about toothbrushes. ", 2), "created_at": "2026-11-25T20:00:00Z"})
	}
	resp := lambdafnResult("4bf92f3577b34da6a3ce929d0e0e4736", map[string]any{"conversation_id": "bench", "summary": strings.Repeat("summary sentence. ", 30), "messages": msgs}, false)
	payload, _ := invoke.EncodeResponse(resp)
	b.Logf("payload %d bytes", len(payload))
	b.Run("json.Valid", func(b *testing.B) {
		for b.Loop() {
			json.Valid(payload)
		}
	})
	b.Run("scanner", func(b *testing.B) {
		for b.Loop() {
			s := rawjson.Scanner{Data: payload}
			if !s.Value() {
				b.Fatal("invalid")
			}
		}
	})
	b.Run("transcode", func(b *testing.B) {
		dst := make([]byte, 0, 16384)
		for b.Loop() {
			if _, _, ok := transcodeToolResult(dst, resp.Result, false, nil); !ok {
				b.Fatal("no")
			}
		}
	})
	i := strings.Index(string(resp.Result), `"text":`) + 7
	b.Run("canonicalString", func(b *testing.B) {
		dst := make([]byte, 0, 16384)
		for b.Loop() {
			transcodeCanonicalString(dst, resp.Result[i:])
		}
	})
	j := strings.Index(string(resp.Result), `"structuredContent":`) + 20
	b.Run("compact", func(b *testing.B) {
		dst := make([]byte, 0, 16384)
		for b.Loop() {
			transcodeCompact(dst, resp.Result[j:])
		}
	})
	b.Run("copy", func(b *testing.B) {
		dst := make([]byte, 0, 16384)
		for b.Loop() {
			dst = append(dst[:0], resp.Result...)
		}
	})
}

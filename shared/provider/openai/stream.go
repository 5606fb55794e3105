package openai

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/provider"
)

var _ provider.Streamer = (*Generator)(nil)

// maxStreamToolCalls bounds the tool calls a streamed reply may assemble.
const maxStreamToolCalls = 128

// wireChunk is one chat.completion.chunk of a streamed reply: the
// choice's delta (text, tool-call fragments keyed by index), its finish
// reason in the last chunk of the choice, and the usage in a final chunk of
// no choices (stream_options.include_usage). A failure mid-stream is an
// {"error"} event.
type wireChunk struct {
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content   *string `json:"content"`
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
	} `json:"error"`
}

// ChatStream implements [provider.Streamer] through POST
// /v1/chat/completions with "stream": true and stream_options.include_usage:
// server-sent events, each "data: " line a chat.completion.chunk, until
// "data: [DONE]". Text deltas go to delta as they arrive; tool calls are
// assembled from their fragments. Each line is bounded by
// [provider.MaxStreamEventBytes], the reply by [provider.MaxStreamBytes];
// the context (and the client's timeout) bound the whole stream.
func (g *Generator) ChatStream(ctx context.Context, req provider.ChatRequest, delta func(string)) (provider.ChatReply, error) {
	const path = "/v1/chat/completions"
	in := g.wireRequest(req)
	in.Stream, in.StreamOptions = true, &streamOptions{IncludeUsage: true}
	body, err := g.c.postStream(ctx, path, in)
	if err != nil {
		return provider.ChatReply{}, err
	}
	defer body.Close()
	var (
		model, finish string
		text          strings.Builder
		calls         []wireToolCall
		size          int
		usage         struct{ in, out int }
		done          bool
	)
	fail := func(format string, args ...any) (provider.ChatReply, error) {
		return provider.ChatReply{}, fmt.Errorf("openai: %s: model %s: stream: "+format, append([]any{path, g.model}, args...)...)
	}
	r := bufio.NewReaderSize(body, 64<<10)
	for !done {
		line, err := readLine(r, provider.MaxStreamEventBytes)
		if errors.Is(err, io.EOF) && finish != "" {
			break // a compatible server that ends without [DONE]
		}
		if errors.Is(err, io.EOF) {
			return fail("the stream ended before the reply did")
		}
		if err != nil {
			if ctx.Err() != nil {
				return provider.ChatReply{}, fmt.Errorf("openai: %s: %w", path, ctx.Err())
			}
			return fail("%v", err)
		}
		data, ok := bytes.CutPrefix(line, []byte("data:"))
		if !ok {
			continue // blank separators, comments (": ping"), event: and id: fields
		}
		data = bytes.TrimSpace(data)
		if string(data) == "[DONE]" {
			done = true
			continue
		}
		var c wireChunk
		if err := json.Unmarshal(data, &c); err != nil {
			return fail("an event is not a chat.completion.chunk: %v", err)
		}
		if c.Error != nil {
			return fail("the server reported an error: %s", cmp.Or(c.Error.Message, c.Error.Type, "no message"))
		}
		if c.Model != "" {
			model = c.Model
		}
		if c.Usage != nil {
			usage.in, usage.out = c.Usage.PromptTokens, c.Usage.CompletionTokens
		}
		for _, ch := range c.Choices {
			if ch.Index != 0 {
				continue
			}
			if ch.FinishReason != nil {
				finish = *ch.FinishReason
			}
			if t := ch.Delta.Content; t != nil && *t != "" {
				if size += len(*t); size > provider.MaxStreamBytes {
					return fail("the reply is longer than %d bytes", provider.MaxStreamBytes)
				}
				text.WriteString(*t)
				delta(*t)
			}
			for _, f := range ch.Delta.ToolCalls {
				if f.Index < 0 || f.Index >= maxStreamToolCalls {
					return fail("tool call index %d is outside 0-%d", f.Index, maxStreamToolCalls-1)
				}
				for len(calls) <= f.Index {
					calls = append(calls, wireToolCall{Type: "function"})
				}
				if size += len(f.ID) + len(f.Function.Name) + len(f.Function.Arguments); size > provider.MaxStreamBytes {
					return fail("the reply is longer than %d bytes", provider.MaxStreamBytes)
				}
				call := &calls[f.Index]
				call.ID += f.ID
				call.Function.Name += f.Function.Name
				call.Function.Arguments += f.Function.Arguments
			}
		}
	}
	return g.reply(model, text.String(), calls, finish, usage.in, usage.out)
}

// readLine reads one line of r without its line ending, or fails when it
// is longer than limit bytes.
func readLine(r *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		part, err := r.ReadSlice('\n')
		if len(line)+len(part) > limit+2 {
			return nil, fmt.Errorf("an event line is longer than %d bytes", limit)
		}
		line = append(line, part...)
		switch {
		case err == nil:
			return bytes.TrimRight(line, "\r\n"), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(line) > 0:
			return bytes.TrimRight(line, "\r\n"), nil
		case errors.Is(err, io.EOF):
			return nil, io.EOF
		default:
			return nil, fmt.Errorf("reading: %w", err)
		}
	}
}

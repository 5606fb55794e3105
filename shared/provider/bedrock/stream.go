package bedrock

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/switchboard-dev/switchboard/shared/provider"
)

var _ provider.Streamer = (*Generator)(nil)

// maxStreamBlocks bounds the content blocks a streamed reply may hold.
const maxStreamBlocks = 128

// ChatStream implements [provider.Streamer] through ConverseStream: an AWS
// event stream of messageStart, then per content block contentBlockStart
// (a toolUse block's id and name), contentBlockDelta (text, or a fragment
// of a toolUse's JSON input) and contentBlockStop, then messageStop (the
// stop reason) and metadata (the usage). Text deltas go to delta as they
// arrive; tool calls are assembled from their fragments. An exception
// event mid-stream is classified as a failed Converse call is. A delta is
// bounded by [provider.MaxStreamEventBytes], the reply by
// [provider.MaxStreamBytes] (the SDK's decoder bounds a whole event-stream
// message at 16 MiB before we see it); the context bounds the whole stream.
func (g *Generator) ChatStream(ctx context.Context, req provider.ChatRequest, delta func(string)) (provider.ChatReply, error) {
	c, err := g.conversation(req)
	if err != nil {
		return provider.ChatReply{}, err
	}
	resp, err := g.rt.ConverseStream(ctx, &bedrockruntime.ConverseStreamInput{ModelId: aws.String(g.model), System: c.system, Messages: c.messages,
		InferenceConfig: c.inference, ToolConfig: c.tools})
	if err != nil {
		return provider.ChatReply{}, classify(err, "converse-stream", g.model)
	}
	stream := resp.GetStream()
	defer stream.Close()
	fail := func(format string, args ...any) (provider.ChatReply, error) {
		return provider.ChatReply{}, fmt.Errorf("bedrock: converse-stream %s: "+format, append([]any{g.model}, args...)...)
	}
	var (
		text    strings.Builder
		tools   = map[int32]*toolUse{}
		order   []int32
		size    int
		stop    types.StopReason
		usage   *types.TokenUsage
		stopped bool
	)
	for {
		var ev types.ConverseStreamOutput
		var ok bool
		select {
		case <-ctx.Done():
			return provider.ChatReply{}, fmt.Errorf("bedrock: converse-stream %s: %w", g.model, ctx.Err())
		case ev, ok = <-stream.Events():
		}
		if !ok {
			break
		}
		switch ev := ev.(type) {
		case *types.ConverseStreamOutputMemberContentBlockStart:
			tu, isTool := ev.Value.Start.(*types.ContentBlockStartMemberToolUse)
			if !isTool {
				continue
			}
			i := aws.ToInt32(ev.Value.ContentBlockIndex)
			if _, seen := tools[i]; seen || len(tools) >= maxStreamBlocks {
				return fail("contentBlockStart %d: a repeated block, or more than %d tool calls", i, maxStreamBlocks)
			}
			tools[i] = &toolUse{id: aws.ToString(tu.Value.ToolUseId), name: aws.ToString(tu.Value.Name)}
			order = append(order, i)
		case *types.ConverseStreamOutputMemberContentBlockDelta:
			var piece string
			var into *strings.Builder
			switch d := ev.Value.Delta.(type) {
			case *types.ContentBlockDeltaMemberText:
				piece, into = d.Value, &text
			case *types.ContentBlockDeltaMemberToolUse:
				i := aws.ToInt32(ev.Value.ContentBlockIndex)
				tu := tools[i]
				if tu == nil {
					return fail("contentBlockDelta %d: a toolUse fragment of a block that did not start as one", i)
				}
				piece, into = aws.ToString(d.Value.Input), &tu.input
			default:
				continue // reasoning and citations are not part of the answer
			}
			if len(piece) > provider.MaxStreamEventBytes {
				return fail("a delta is longer than %d bytes", provider.MaxStreamEventBytes)
			}
			if size += len(piece); size > provider.MaxStreamBytes {
				return fail("the reply is longer than %d bytes", provider.MaxStreamBytes)
			}
			into.WriteString(piece)
			if into == &text && piece != "" {
				delta(piece)
			}
		case *types.ConverseStreamOutputMemberMessageStop:
			stop, stopped = ev.Value.StopReason, true
		case *types.ConverseStreamOutputMemberMetadata:
			usage = ev.Value.Usage
		}
	}
	if err := stream.Err(); err != nil {
		if ctx.Err() != nil {
			return provider.ChatReply{}, fmt.Errorf("bedrock: converse-stream %s: %w", g.model, ctx.Err())
		}
		return provider.ChatReply{}, classify(err, "converse-stream", g.model)
	}
	if !stopped {
		return fail("the stream ended before messageStop")
	}
	var calls []provider.ToolCall
	for _, i := range order {
		tu := tools[i]
		args := json.RawMessage(strings.TrimSpace(tu.input.String()))
		if len(args) == 0 {
			args = json.RawMessage(`{}`)
		}
		if !json.Valid(args) {
			return fail("toolUse %s: input is not JSON", tu.name)
		}
		calls = append(calls, provider.ToolCall{ID: tu.id, Name: tu.name, Arguments: args})
	}
	return g.reply("converse-stream", text.String(), calls, stop, usage)
}

// toolUse is a toolUse block being assembled from a stream.
type toolUse struct {
	id, name string
	input    strings.Builder
}

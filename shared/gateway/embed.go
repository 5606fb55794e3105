package gateway

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// toolEmbedder returns what tool_search embeds with: Options.ToolEmbedder,
// else the catalog's vector_embed_texts function when
// Options.ToolEmbedFunction asks for it and the catalog has it, else nil
// (BM25 alone).
func (g *Gateway) toolEmbedder() provider.Embedder {
	if g.opts.ToolEmbedder != nil {
		return g.opts.ToolEmbedder
	}
	if t, ok := g.opts.Catalog.Tool(catalog.EmbedTextsTool); ok && g.opts.ToolEmbedFunction && t.GatewayCalls {
		return &functionEmbedder{g: g, tool: t}
	}
	return nil
}

// functionEmbedder embeds by invoking vector_embed_texts through the
// gateway's invoker, for the caller of the search in its context
// ([embeddingFor]), in batches of [provider.MaxEmbedTexts].
type functionEmbedder struct {
	g    *Gateway
	tool *catalog.Tool
}

// embedCaller is who a search embeds for, and its trace.
type embedCaller struct {
	caller tenant.Caller
	trace  string
}

type embedCallerKey struct{}

// embeddingFor returns ctx under which a functionEmbedder invokes for caller.
func embeddingFor(ctx context.Context, caller tenant.Caller, trace string) context.Context {
	return context.WithValue(ctx, embedCallerKey{}, embedCaller{caller, trace})
}

func (e *functionEmbedder) Embed(ctx context.Context, req provider.EmbedRequest) (provider.Embeddings, error) {
	who, ok := ctx.Value(embedCallerKey{}).(embedCaller)
	if !ok {
		return provider.Embeddings{}, fmt.Errorf("embed texts: no caller")
	}
	var out provider.Embeddings
	for start := 0; start < len(req.Texts); start += provider.MaxEmbedTexts {
		args, err := json.Marshal(provider.TextsInput{Texts: req.Texts[start:min(start+provider.MaxEmbedTexts, len(req.Texts))], Purpose: req.Purpose})
		if err != nil {
			return provider.Embeddings{}, fmt.Errorf("embed texts: %w", err)
		}
		raw, err := e.g.callFunction(ctx, who.caller, who.trace, e.tool, args, nil)
		if err != nil {
			return provider.Embeddings{}, fmt.Errorf("embed texts: %w", err)
		}
		var batch provider.TextsOutput
		if err := json.Unmarshal(raw, &batch); err != nil {
			return provider.Embeddings{}, fmt.Errorf("embed texts: decoding the answer: %w", err)
		}
		out.Vectors = append(out.Vectors, batch.Vectors...)
		out.Provider, out.Model = batch.Provider, batch.Model
	}
	return out, nil
}

// Provider, Model and Dims are not known before a call: tool_search does
// not ask.
func (e *functionEmbedder) Provider() string { return "function" }
func (e *functionEmbedder) Model() string    { return e.tool.Function }
func (e *functionEmbedder) Dims() int        { return 0 }

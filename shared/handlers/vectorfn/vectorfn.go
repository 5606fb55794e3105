// Package vectorfn binds the vector family's functions to package vector:
// one [lambdafn.Function] per function, which its main starts
// (functions/vector/<name>/main.go) and package handlers lists. The
// pipeline's rephrase and grade steps, vector functions served by package
// rag, are package ragfn's.
package vectorfn

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/callcontext"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/metrics"
	"github.com/switchboard-dev/switchboard/shared/prompt"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/quota"
	"github.com/switchboard-dev/switchboard/shared/settings"
	"github.com/switchboard-dev/switchboard/shared/tenant"
	"github.com/switchboard-dev/switchboard/shared/vector"
	"github.com/switchboard-dev/switchboard/shared/vector/remote"
)

func service(d lambdafn.Deps) *vector.Service {
	return vector.New(d.Table, d.Blobs, d.Embedder, options(d))
}

func options(d lambdafn.Deps) *vector.Options {
	return &vector.Options{Logger: d.Logger, Progress: lambdafn.ReportProgress, Quotas: quota.New(d.Table, &quota.Options{Defaults: d.Quotas, Overrides: d.OwnTable}),
		Generator: d.Generator}
}

// The vector family's tool functions.
var (
	Storage        = lambdafn.Method("optimizer_vs-storage", service, (*vector.Service).Storage)
	StoreCreate    = lambdafn.Method("vector_store_create", service, (*vector.Service).CreateStore)
	StoreGet       = lambdafn.Method("vector_store_get", service, (*vector.Service).GetStore)
	StoreList      = lambdafn.Method("vector_store_list", service, (*vector.Service).ListStores)
	StoreDelete    = lambdafn.Method("vector_store_delete", service, (*vector.Service).DeleteStore)
	DocumentList   = lambdafn.Method("vector_document_list", service, (*vector.Service).ListDocuments)
	DocumentDelete = lambdafn.Method("vector_document_delete", service, (*vector.Service).DeleteDocument)
	DocumentIngest = lambdafn.Method("vector_document_ingest", service, (*vector.Service).Ingest)
)

// Retriever serves optimizer_vs-retriever: the pipeline's retrieve step and a
// public tool. A search spanning several groups of shards fans out to
// [SearchGroup] through d.Invoker; a function without one (run alone: sam
// local invoke, a test) searches every group itself. A search naming no
// stores asks d's generator which to search, with the tenant's
// optimizer_vs-table-selection prompt, when it is a hosted model.
var Retriever = lambdafn.ToolFunction("optimizer_vs-retriever", func(t *catalog.Tool, d lambdafn.Deps) lambda.Handler {
	opts := options(d)
	opts.Generator, opts.Prompts = d.Generator, prompt.NewStore(d.Table, nil)
	if d.Invoker != nil {
		opts.Searcher = remote.New(d.Invoker, SearchGroup.Path, searchGroupTool)
	}
	svc, threads := vector.New(d.Table, d.Blobs, d.Embedder, opts), settings.New(d.Table, nil)
	return lambdafn.Tool(t, d, func(ctx context.Context, c tenant.Caller, in vector.RetrieveInput) (vector.RetrieveOutput, error) {
		in, err := withThreadSettings(ctx, threads, c, in)
		if err != nil {
			return vector.RetrieveOutput{}, err
		}
		return svc.Retrieve(ctx, c, in)
	})
})

// withThreadSettings fills what a retrieval leaves unset (stores, top_k,
// mode) from the settings of the thread it serves (seed 000: optimizer_*
// tools read their thread's settings): its thread_id, else the thread the
// request named in _meta, else the caller's default thread.
func withThreadSettings(ctx context.Context, threads *settings.Store, c tenant.Caller, in vector.RetrieveInput) (vector.RetrieveInput, error) {
	var meta map[string]any
	if call, _ := callcontext.FromContext(ctx); call.Thread != "" {
		meta = map[string]any{settings.MetaThreadID: call.Thread}
	}
	thread, err := settings.Thread(c, in.ThreadID, meta)
	if err != nil {
		return in, err
	}
	st, err := threads.Get(ctx, c.Tenant, thread)
	if err != nil {
		return in, err
	}
	if len(in.Stores) == 0 {
		in.Stores = st.VectorSearch.Stores
	}
	if in.TopK == 0 {
		in.TopK = st.VectorSearch.TopK
	}
	if in.Mode == "" {
		in.Mode = st.VectorSearch.Mode
	}
	return in, nil
}

const searchGroupTool = "optimizer_vs-search-group"

// SearchGroup serves optimizer_vs-search-group: a worker of a search fanned
// out over functions (see [vector.Service.SearchGroup]).
var SearchGroup = lambdafn.ToolFunction(searchGroupTool, func(t *catalog.Tool, d lambdafn.Deps) lambda.Handler {
	svc := service(d)
	return lambdafn.Tool(t, d, func(ctx context.Context, c tenant.Caller, in vector.SearchGroupInput) (groupAnswer, error) {
		out, err := svc.SearchGroup(ctx, c, in)
		return groupAnswer{out}, err
	})
})

// groupAnswer is a worker's answer as it travels: once, as structured
// content, with a line saying what it holds as the text content rather than
// a second copy of the JSON. Lambda bounds a response at 6 MB.
type groupAnswer struct{ vector.SearchGroupOutput }

// MCPContent implements [lambdafn.Contenter].
func (a groupAnswer) MCPContent() []mcp.Content {
	var text string
	switch {
	case a.Stats != nil:
		text = fmt.Sprintf("BM25 statistics of %d chunks", a.Stats.Chunks)
	case a.Result != nil:
		text = fmt.Sprintf("%d BM25 and %d vector hits", len(a.Result.Lists.BM25), len(a.Result.Lists.Vector))
	default:
		text = fmt.Sprintf("%d vectors", len(a.Vectors))
	}
	return []mcp.Content{&mcp.TextContent{Text: text}}
}

// Indexer is the vector/indexer function. It is not a tool: S3 invokes it
// with ObjectCreated and ObjectRemoved notifications for keys under
// tenants/, and it ingests or removes the documents uploaded under
// tenants/<tenant>/documents/<store>/ (see [vector.Service.Index]). It
// returns an error, so that Lambda retries the event, only when retrying may
// help.
var Indexer = lambdafn.Function{Path: "vector/indexer", Build: func(d lambdafn.Deps) lambda.Handler {
	svc := service(d)
	log := d.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("function", "vector/indexer")
	return lambda.NewHandler(func(ctx context.Context, ev events.S3Event) (vector.IndexReport, error) {
		start := time.Now()
		rep, err := svc.Index(ctx, ev)
		d.Metrics.Call(metrics.Call{Family: catalog.VectorFamily, Function: "vector/indexer", Latency: time.Since(start), Kind: metrics.KindOf(err),
			XRayTraceID: callcontext.XRayTraceID(callcontext.LambdaTraceHeader(ctx))})
		level := slog.LevelInfo
		if err != nil {
			level = slog.LevelError
		}
		log.Log(ctx, level, "indexed", "records", len(ev.Records), "ingested", len(rep.Ingested),
			"deleted", len(rep.Deleted), "skipped", rep.Skipped, "error", err)
		return rep, err
	})
}}

// Functions returns every function of the vector family that package vector
// serves.
func Functions() []lambdafn.Function {
	return []lambdafn.Function{Retriever, SearchGroup, Storage, StoreCreate, StoreGet, StoreList, StoreDelete,
		DocumentIngest, DocumentList, DocumentDelete, Indexer, EmbedTexts}
}

// EmbedTexts serves vector_embed_texts: the deployed gateway's tool_search
// embeds tools and queries through it, with the stack's embedder, or the
// offline one when d names none (a function run without configuration, as
// the vector service does).
var EmbedTexts = lambdafn.Method(catalog.EmbedTextsTool, func(d lambdafn.Deps) provider.Texts {
	if d.Embedder == nil {
		return provider.Texts{Embedder: offline.NewEmbedder(offline.DefaultDims)}
	}
	return provider.Texts{Embedder: d.Embedder}
}, provider.Texts.Embed)

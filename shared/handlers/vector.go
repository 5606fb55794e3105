package handlers

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/tenant"
	"github.com/switchboard-dev/switchboard/shared/vector"
	"github.com/switchboard-dev/switchboard/shared/vector/remote"
)

func vectorService(d lambdafn.Deps) *vector.Service {
	return vector.New(d.Table, d.Blobs, d.Embedder, vectorOptions(d))
}

func vectorOptions(d lambdafn.Deps) *vector.Options {
	return &vector.Options{Logger: d.Logger, Progress: lambdafn.ReportProgress}
}

// VectorStorage builds the optimizer_vs-storage function.
func VectorStorage(d lambdafn.Deps) lambda.Handler {
	return lambdafn.Tool(tool("optimizer_vs-storage"), d, vectorService(d).Storage)
}

// VectorStoreCreate builds the vector_store_create function.
func VectorStoreCreate(d lambdafn.Deps) lambda.Handler {
	return lambdafn.Tool(tool("vector_store_create"), d, vectorService(d).CreateStore)
}

// VectorStoreGet builds the vector_store_get function.
func VectorStoreGet(d lambdafn.Deps) lambda.Handler {
	return lambdafn.Tool(tool("vector_store_get"), d, vectorService(d).GetStore)
}

// VectorStoreList builds the vector_store_list function.
func VectorStoreList(d lambdafn.Deps) lambda.Handler {
	return lambdafn.Tool(tool("vector_store_list"), d, vectorService(d).ListStores)
}

// VectorStoreDelete builds the vector_store_delete function.
func VectorStoreDelete(d lambdafn.Deps) lambda.Handler {
	return lambdafn.Tool(tool("vector_store_delete"), d, vectorService(d).DeleteStore)
}

// VectorDocumentList builds the vector_document_list function.
func VectorDocumentList(d lambdafn.Deps) lambda.Handler {
	return lambdafn.Tool(tool("vector_document_list"), d, vectorService(d).ListDocuments)
}

// VectorDocumentDelete builds the vector_document_delete function.
func VectorDocumentDelete(d lambdafn.Deps) lambda.Handler {
	return lambdafn.Tool(tool("vector_document_delete"), d, vectorService(d).DeleteDocument)
}

// VectorRetriever builds the optimizer_vs-retriever function: the
// pipeline's retrieve step and a public tool. A search spanning several
// groups of shards fans out to the search group function through
// d.Invoker; a function without one (run alone: sam local invoke, a test)
// searches every group itself.
func VectorRetriever(d lambdafn.Deps) lambda.Handler {
	opts := vectorOptions(d)
	if d.Invoker != nil {
		worker := tool("optimizer_vs-search-group")
		opts.Searcher = remote.New(d.Invoker, worker.Function, worker.Name)
	}
	return lambdafn.Tool(tool("optimizer_vs-retriever"), d, vector.New(d.Table, d.Blobs, d.Embedder, opts).Retrieve)
}

// VectorSearchGroup builds the optimizer_vs-search-group function: a worker
// of a search fanned out over functions (see [vector.Service.SearchGroup]).
func VectorSearchGroup(d lambdafn.Deps) lambda.Handler {
	svc := vectorService(d)
	return lambdafn.Tool(tool("optimizer_vs-search-group"), d, func(ctx context.Context, c tenant.Caller, in vector.SearchGroupInput) (groupAnswer, error) {
		out, err := svc.SearchGroup(ctx, c, in)
		return groupAnswer{out}, err
	})
}

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

// VectorDocumentIngest builds the vector_document_ingest function.
func VectorDocumentIngest(d lambdafn.Deps) lambda.Handler {
	return lambdafn.Tool(tool("vector_document_ingest"), d, vectorService(d).Ingest)
}

// VectorIndexer builds the vector/indexer function. It is not a tool: S3
// invokes it with ObjectCreated and ObjectRemoved notifications for keys under
// tenants/, and it ingests or removes the documents uploaded under
// tenants/<tenant>/documents/<store>/ (see [vector.Service.Index]). It
// returns an error, so that Lambda retries the event, only when retrying may
// help.
func VectorIndexer(d lambdafn.Deps) lambda.Handler {
	svc := vectorService(d)
	log := d.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("function", "vector/indexer")
	return lambda.NewHandler(func(ctx context.Context, ev events.S3Event) (vector.IndexReport, error) {
		rep, err := svc.Index(ctx, ev)
		level := slog.LevelInfo
		if err != nil {
			level = slog.LevelError
		}
		log.Log(ctx, level, "indexed", "records", len(ev.Records), "ingested", len(rep.Ingested),
			"deleted", len(rep.Deleted), "skipped", rep.Skipped, "error", err)
		return rep, err
	})
}

// Package handlers binds every function in the catalog to the domain code
// that serves it. Each function's main calls one constructor here; the local
// gateway calls [All] to serve every function in one process.
//
//	func main() { lambdafn.Start(handlers.MemoryAddMessage) } // functions/memory/add_message/main.go
package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/audit"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/memory"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// A Constructor builds one function's Lambda handler from its dependencies.
type Constructor func(lambdafn.Deps) lambda.Handler

// All returns the constructor of every function in the default catalog,
// keyed by function path.
func All() map[string]Constructor {
	all := map[string]Constructor{
		"memory/get_or_create":         MemoryGetOrCreate,
		"memory/add_message":           MemoryAddMessage,
		"memory/get_context":           MemoryGetContext,
		"memory/get_all_messages":      MemoryGetAllMessages,
		"memory/get_old_messages":      MemoryGetOldMessages,
		"memory/get_or_create_summary": MemoryGetOrCreateSummary,
		"memory/set_summary":           MemorySetSummary,
		"memory/get_summary":           MemoryGetSummary,
		"memory/clear":                 MemoryClear,
		"memory/delete":                MemoryDelete,
		"memory/resource":              MemoryResource,
		"operations/get_audit_trace":   GetAuditTrace,
		"vector/retriever":             VectorRetriever,
		"vector/search_group":          VectorSearchGroup,
		"vector/storage":               VectorStorage,
		"vector/store_create":          VectorStoreCreate,
		"vector/store_get":             VectorStoreGet,
		"vector/store_list":            VectorStoreList,
		"vector/store_delete":          VectorStoreDelete,
		"vector/document_ingest":       VectorDocumentIngest,
		"vector/document_list":         VectorDocumentList,
		"vector/document_delete":       VectorDocumentDelete,
		"vector/indexer":               VectorIndexer,
		"vector/rephrase":              VectorRephrase,
		"vector/grade":                 VectorGrade,
		"rag/basic":                    RAGBasic,
		"rag/basic_rerank":             RAGBasicRerank,
		"rag/crag":                     RAGCRAG,
		"rag/health_check":             RAGHealthCheck,
	}
	maps.Copy(all, careerFunctions())
	return all
}

// Build returns the handlers of every function in constructors, built from d.
func Build(constructors map[string]Constructor, d lambdafn.Deps) map[string]lambda.Handler {
	out := make(map[string]lambda.Handler, len(constructors))
	for path, c := range constructors {
		out[path] = c(d)
	}
	return out
}

func tool(name string) *catalog.Tool {
	t, ok := catalog.Default().Tool(name)
	if !ok {
		panic("handlers: no tool " + name + " in the catalog")
	}
	return t
}

func memoryService(d lambdafn.Deps) *memory.Service {
	return memory.New(d.Table, &memory.Options{Summarizer: d.Summarizer, Logger: d.Logger})
}

// MemoryGetOrCreate builds the memory_get_or_create function.
func MemoryGetOrCreate(d lambdafn.Deps) lambda.Handler {
	return lambdafn.Tool(tool("memory_get_or_create"), d, memoryService(d).GetOrCreate)
}

// MemoryAddMessage builds the memory_add_message function.
func MemoryAddMessage(d lambdafn.Deps) lambda.Handler {
	return lambdafn.Tool(tool("memory_add_message"), d, memoryService(d).AddMessage)
}

// MemoryGetContext builds the memory_get_context function.
func MemoryGetContext(d lambdafn.Deps) lambda.Handler {
	return lambdafn.Tool(tool("memory_get_context"), d, memoryService(d).GetContext)
}

// MemoryGetAllMessages builds the memory_get_all_messages function.
func MemoryGetAllMessages(d lambdafn.Deps) lambda.Handler {
	return lambdafn.Tool(tool("memory_get_all_messages"), d, memoryService(d).GetAllMessages)
}

// MemoryGetOldMessages builds the memory_get_old_messages function.
func MemoryGetOldMessages(d lambdafn.Deps) lambda.Handler {
	return lambdafn.Tool(tool("memory_get_old_messages"), d, memoryService(d).GetOldMessages)
}

// MemoryGetOrCreateSummary builds the memory_get_or_create_summary function.
func MemoryGetOrCreateSummary(d lambdafn.Deps) lambda.Handler {
	return lambdafn.Tool(tool("memory_get_or_create_summary"), d, memoryService(d).GetOrCreateSummary)
}

// MemorySetSummary builds the memory_set_summary function.
func MemorySetSummary(d lambdafn.Deps) lambda.Handler {
	return lambdafn.Tool(tool("memory_set_summary"), d, memoryService(d).SetSummary)
}

// MemoryGetSummary builds the memory_get_summary function.
func MemoryGetSummary(d lambdafn.Deps) lambda.Handler {
	return lambdafn.Tool(tool("memory_get_summary"), d, memoryService(d).GetSummary)
}

// MemoryClear builds the memory_clear function.
func MemoryClear(d lambdafn.Deps) lambda.Handler {
	return lambdafn.Tool(tool("memory_clear"), d, memoryService(d).Clear)
}

// MemoryDelete builds the memory_delete function.
func MemoryDelete(d lambdafn.Deps) lambda.Handler {
	return lambdafn.Tool(tool("memory_delete"), d, memoryService(d).Delete)
}

// GetAuditTrace builds the get_audit_trace function.
func GetAuditTrace(d lambdafn.Deps) lambda.Handler {
	return lambdafn.Tool(tool("get_audit_trace"), d, audit.New(d.Table, nil).GetTrace)
}

const conversationURIPrefix = "memory://conversation/"

// MemoryResource builds the function serving memory://conversation/{id}.
func MemoryResource(d lambdafn.Deps) lambda.Handler {
	svc := memoryService(d)
	return lambdafn.Resources("memory/resource", d, lambdafn.ResourceFuncs{
		List: func(ctx context.Context, c tenant.Caller, cursor string) (*mcp.ListResourcesResult, error) {
			refs, next, err := svc.ListConversations(ctx, c, cursor)
			if err != nil {
				return nil, err
			}
			res := &mcp.ListResourcesResult{Resources: make([]*mcp.Resource, len(refs)), NextCursor: next}
			for i, r := range refs {
				res.Resources[i] = &mcp.Resource{
					URI:         conversationURIPrefix + r.ConversationID,
					Name:        "Conversation " + r.ConversationID,
					Description: "Conversation history for " + r.ConversationID,
					MIMEType:    "application/json",
				}
			}
			return res, nil
		},
		Read: func(ctx context.Context, c tenant.Caller, uri string) (*mcp.ReadResourceResult, error) {
			id, ok := strings.CutPrefix(uri, conversationURIPrefix)
			if !ok || memory.ValidateID(id) != nil {
				return nil, fault.NotFound("no resource %q: conversation resources look like %sID", uri, conversationURIPrefix)
			}
			conv, err := svc.Conversation(ctx, c, id)
			if err != nil {
				return nil, err
			}
			b, err := json.Marshal(conv)
			if err != nil {
				return nil, fmt.Errorf("encoding conversation: %w", err)
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(b)}}}, nil
		},
	})
}

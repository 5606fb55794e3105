// Package memoryfn binds the memory family's functions to package memory:
// one [lambdafn.Function] per function, which its main starts
// (functions/memory/<name>/main.go) and package handlers lists.
//
//	func main() { lambdafn.Start(memoryfn.AddMessage, lambdafn.Openers{}) }
package memoryfn

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/memory"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

func service(d lambdafn.Deps) *memory.Service {
	return memory.New(d.Table, &memory.Options{Summarizer: d.Summarizer, Logger: d.Logger})
}

// The memory family's tool functions.
var (
	GetOrCreate        = lambdafn.Method("memory_get_or_create", service, (*memory.Service).GetOrCreate)
	AddMessage         = lambdafn.Method("memory_add_message", service, (*memory.Service).AddMessage)
	GetContext         = lambdafn.Method("memory_get_context", service, (*memory.Service).GetContext)
	GetAllMessages     = lambdafn.Method("memory_get_all_messages", service, (*memory.Service).GetAllMessages)
	GetOldMessages     = lambdafn.Method("memory_get_old_messages", service, (*memory.Service).GetOldMessages)
	GetOrCreateSummary = lambdafn.Method("memory_get_or_create_summary", service, (*memory.Service).GetOrCreateSummary)
	SetSummary         = lambdafn.Method("memory_set_summary", service, (*memory.Service).SetSummary)
	GetSummary         = lambdafn.Method("memory_get_summary", service, (*memory.Service).GetSummary)
	Clear              = lambdafn.Method("memory_clear", service, (*memory.Service).Clear)
	Delete             = lambdafn.Method("memory_delete", service, (*memory.Service).Delete)
)

// Resource serves memory://conversation/{id}: resources/list of the caller's
// conversations and resources/read of one.
var Resource = lambdafn.Function{Path: resourcePath, Build: buildResource}

const resourcePath = "memory/resource"

// Functions returns every function of the memory family.
func Functions() []lambdafn.Function {
	return []lambdafn.Function{GetOrCreate, AddMessage, GetContext, GetAllMessages, GetOldMessages, GetOrCreateSummary,
		SetSummary, GetSummary, Clear, Delete, Resource}
}

const conversationURIPrefix = "memory://conversation/"

func buildResource(d lambdafn.Deps) lambda.Handler {
	svc := service(d)
	return lambdafn.Resources(resourcePath, d, lambdafn.ResourceFuncs{
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

// Package chatfn binds the chat orchestration's function (chat/chat) to
// package chat: the thread's history through the memory family, its settings
// through package settings and the prompts with their overrides through
// package prompt (both on the same table), the model, the pipeline for the
// vector-search path, and the tools through the function's invoker (the
// catalog's Invokes of the chat tool).
//
//	func main() { lambdafn.Start(chatfn.Chat, lambdafn.Openers{...}) } // functions/chat/chat/main.go
package chatfn

import (
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/chat"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/memory"
	"github.com/switchboard-dev/switchboard/shared/prompt"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/settings"
)

// service builds the chat service from d: its generator, or the offline one
// (the route is then chosen by code); tools only where an invoker is
// configured, each call held to the caller's rate limits (d.Limiter).
func service(d lambdafn.Deps) *chat.Service {
	opts := chat.Options{
		Memory:    memory.New(d.Table, &memory.Options{Summarizer: d.Summarizer, Logger: d.Logger}),
		Generator: d.Generator,
		Pipeline:  d.Pipeline,
		Settings:  threadSettings{settings.New(d.Table, nil)},
		Prompts:   prompt.NewStore(d.Table, nil),
		Deltas:    lambdafn.ReportProgress,
		Streaming: lambdafn.Streaming,
		Logger:    d.Logger,
	}
	if opts.Generator == nil {
		opts.Generator = offline.NewGenerator()
	}
	if d.Invoker != nil {
		opts.Tools = &chat.Invoked{Catalog: catalog.Default(), Invoker: d.Invoker, Limiter: d.Limiter}
	}
	return chat.New(opts)
}

// Chat serves the tool chat.
var Chat = lambdafn.Method(catalog.ChatTool, service, (*chat.Service).Chat)

// Functions returns the chat family's functions.
func Functions() []lambdafn.Function { return []lambdafn.Function{Chat} }

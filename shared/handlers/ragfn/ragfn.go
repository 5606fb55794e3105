// Package ragfn binds the RAG pipeline's functions to package rag: the
// pipeline tools that drive the state machine (rag/basic,
// rag/basic_rerank, rag/crag, rag/graphrag), rag/health_check, and the
// pipeline's rephrase and grade steps (vector/rephrase, vector/grade).
// Each is a [lambdafn.Function], which its main starts and package handlers
// lists. None reads the vector stores itself, so none links their code
// (package vector): the tools that do are package ragstorefn's.
package ragfn

import (
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/rag"
)

// Generator is the generator d names, or the offline one: a function run
// without configuration (a test, sam local invoke) still generates.
func Generator(d lambdafn.Deps) provider.Generator {
	if d.Generator == nil {
		return offline.NewGenerator()
	}
	return d.Generator
}

func steps(d lambdafn.Deps) *rag.Steps { return rag.NewSteps(d.Table, Generator(d)) }

// The pipeline's steps that package rag serves.
var (
	// Rephrase serves optimizer_vs-rephrase, the pipeline's first step.
	Rephrase = lambdafn.Method("optimizer_vs-rephrase", steps, (*rag.Steps).Rephrase)
	// Grade serves optimizer_vs-grade, the pipeline's last step.
	Grade = lambdafn.Method("optimizer_vs-grade", steps, (*rag.Steps).Grade)
)

// service builds the pipeline tools' service. The pipeline is d's: the
// state machine on AWS (config/stepfunctions), the local stack's on a
// laptop (package local). A function without one answers that the pipeline
// is not configured: it does not link its steps' code to run them itself,
// as every linked package costs its initialisation at each cold start.
func service(d lambdafn.Deps) *rag.Service {
	return rag.New(d.Table, rag.Options{Generator: Generator(d), Runner: d.Pipeline, Logger: d.Logger, After: d.Later})
}

// health builds the service of rag_health_check, which reads the recorded
// outcomes and runs no pipeline.
func health(d lambdafn.Deps) *rag.Service {
	return rag.New(d.Table, rag.Options{Logger: d.Logger, After: d.Later, Pipelines: catalog.Default().RAGPipelines()})
}

// Recording marks a pipeline tool's function as recording its call's
// health after the answer.
func Recording(f lambdafn.Function) lambdafn.Function {
	f.Later = true
	return f
}

// The pipeline tools and the health check.
var (
	Basic       = Recording(lambdafn.Method("rag_basic", service, (*rag.Service).Basic))
	BasicRerank = Recording(lambdafn.Method("rag_basic_rerank", service, (*rag.Service).BasicRerank))
	CRAG        = Recording(lambdafn.Method("rag_crag", service, (*rag.Service).CRAG))
	GraphRAG    = Recording(lambdafn.Method("rag_graphrag", service, (*rag.Service).GraphRAG))
	HealthCheck = lambdafn.Method("rag_health_check", health, (*rag.Service).Health)
)

// Functions returns every function this package binds.
func Functions() []lambdafn.Function {
	return []lambdafn.Function{Basic, BasicRerank, CRAG, GraphRAG, HealthCheck, Rephrase, Grade}
}

// Package ragfn binds the RAG pipeline's functions to package rag: the
// pipeline tools (rag/basic, rag/basic_rerank, rag/crag, rag/graphrag,
// rag/iris_global_graphrag, rag/pylate_colbert), rag/health_check,
// and the pipeline's rephrase and grade steps (vector/rephrase, vector/grade).
// Each is a [lambdafn.Function], which its main starts and package handlers
// lists.
package ragfn

import (
	"sync"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/prompt"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/multivector"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/rag"
	"github.com/switchboard-dev/switchboard/shared/vector"
)

// generator is the generator d names, or the offline one: a function run
// without configuration (a test, sam local invoke) still generates.
func generator(d lambdafn.Deps) provider.Generator {
	if d.Generator == nil {
		return offline.NewGenerator()
	}
	return d.Generator
}

func steps(d lambdafn.Deps) *rag.Steps { return rag.NewSteps(d.Table, generator(d)) }

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
	return rag.New(d.Table, rag.Options{Generator: generator(d), Runner: d.Pipeline, Logger: d.Logger, After: d.Later})
}

// colbertCacheBytes bounds the chunk shards rag_pylate_colbert keeps
// decoded, beside its token vectors (vector.DefaultLateBytes): its function
// has 1024 MB (catalog.colbertLimits).
const colbertCacheBytes = 256 << 20

// colbertCache is the process's cache of rag_pylate_colbert's shards.
var colbertCache = sync.OnceValue(func() *vector.Cache { return vector.NewCache(colbertCacheBytes) })

// colbert builds rag_pylate_colbert's service: the pipeline tools', with
// late interaction over d's stores with d's multi-vector embedder (the
// offline one when none is configured).
func colbert(d lambdafn.Deps) *rag.Service {
	multi := d.MultiVector
	if multi == nil {
		multi = multivector.NewHashing(0)
	}
	late := vector.New(d.Table, d.Blobs, d.Embedder, &vector.Options{MultiVector: multi, Cache: colbertCache(), Logger: d.Logger})
	return rag.New(d.Table, rag.Options{Generator: generator(d), Runner: d.Pipeline, Late: late, Logger: d.Logger, After: d.Later})
}

// global builds rag_iris_global_graphrag's service: it runs no pipeline,
// and reads the stores' community reports itself (written by the
// configured generator when there is one; of the stores the model chooses,
// as the retriever does, when the request names none).
func global(d lambdafn.Deps) *rag.Service {
	reports := vector.New(d.Table, d.Blobs, d.Embedder, &vector.Options{Logger: d.Logger, Generator: d.Generator, Prompts: prompt.NewStore(d.Table, nil)})
	return rag.New(d.Table, rag.Options{Generator: generator(d), Reports: reports, Logger: d.Logger, After: d.Later})
}

// health builds the service of rag_health_check, which reads the recorded
// outcomes and runs no pipeline.
func health(d lambdafn.Deps) *rag.Service {
	return rag.New(d.Table, rag.Options{Logger: d.Logger, After: d.Later, Pipelines: catalog.Default().RAGPipelines()})
}

// recording marks a pipeline tool's function as recording its call's
// health after the answer.
func recording(f lambdafn.Function) lambdafn.Function {
	f.Later = true
	return f
}

// The pipeline tools and the health check.
var (
	Basic       = recording(lambdafn.Method("rag_basic", service, (*rag.Service).Basic))
	BasicRerank = recording(lambdafn.Method("rag_basic_rerank", service, (*rag.Service).BasicRerank))
	CRAG        = recording(lambdafn.Method("rag_crag", service, (*rag.Service).CRAG))
	GraphRAG    = recording(lambdafn.Method("rag_graphrag", service, (*rag.Service).GraphRAG))
	GlobalGraph = recording(lambdafn.Method("rag_iris_global_graphrag", global, (*rag.Service).GlobalGraphRAG))
	Colbert     = recording(lambdafn.Method("rag_pylate_colbert", colbert, (*rag.Service).PylateColbert))
	HealthCheck = lambdafn.Method("rag_health_check", health, (*rag.Service).Health)
)

// Functions returns every function package rag serves.
func Functions() []lambdafn.Function {
	return []lambdafn.Function{Basic, BasicRerank, CRAG, GraphRAG, GlobalGraph, Colbert, HealthCheck, Rephrase, Grade}
}

// Package ragstorefn binds the RAG tools that read the vector stores
// themselves to package rag: rag/pylate_colbert (late interaction over the
// stores' token vectors) and rag/iris_global_graphrag (the stores'
// community reports). They link the stores' code (package vector), which
// the other pipeline tools (package ragfn) do not. Each is a
// [lambdafn.Function], which its main starts and package handlers lists.
package ragstorefn

import (
	"sync"

	"github.com/switchboard-dev/switchboard/shared/handlers/ragfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/prompt"
	"github.com/switchboard-dev/switchboard/shared/provider/multivector"
	"github.com/switchboard-dev/switchboard/shared/rag"
	"github.com/switchboard-dev/switchboard/shared/vector"
)

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
	return rag.New(d.Table, rag.Options{Generator: ragfn.Generator(d), Runner: d.Pipeline, Late: late, Logger: d.Logger, After: d.Later})
}

// global builds rag_iris_global_graphrag's service: it runs no pipeline,
// and reads the stores' community reports itself (written by the
// configured generator when there is one; of the stores the model chooses,
// as the retriever does, when the request names none).
func global(d lambdafn.Deps) *rag.Service {
	reports := vector.New(d.Table, d.Blobs, d.Embedder, &vector.Options{Logger: d.Logger, Generator: d.Generator, Prompts: prompt.NewStore(d.Table, nil)})
	return rag.New(d.Table, rag.Options{Generator: ragfn.Generator(d), Reports: reports, Logger: d.Logger, After: d.Later})
}

// The pipeline tools that read the stores.
var (
	GlobalGraph = ragfn.Recording(lambdafn.Method("rag_iris_global_graphrag", global, (*rag.Service).GlobalGraphRAG))
	Colbert     = ragfn.Recording(lambdafn.Method("rag_pylate_colbert", colbert, (*rag.Service).PylateColbert))
)

// Functions returns every function this package binds.
func Functions() []lambdafn.Function { return []lambdafn.Function{GlobalGraph, Colbert} }

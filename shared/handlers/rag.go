package handlers

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/pipeline"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/rag"
)

// generator is the generator d names, or the offline one: a function run
// without configuration (a test, sam local invoke) still generates.
func generator(d lambdafn.Deps) provider.Generator {
	if d.Generator == nil {
		return offline.NewGenerator()
	}
	return d.Generator
}

func ragSteps(d lambdafn.Deps) *rag.Steps { return rag.NewSteps(d.Table, generator(d)) }

// VectorRephrase builds the optimizer_vs-rephrase function, the pipeline's first step.
func VectorRephrase(d lambdafn.Deps) lambda.Handler {
	return lambdafn.Tool(tool("optimizer_vs-rephrase"), d, ragSteps(d).Rephrase)
}

// VectorGrade builds the optimizer_vs-grade function, the pipeline's last step.
func VectorGrade(d lambdafn.Deps) lambda.Handler {
	return lambdafn.Tool(tool("optimizer_vs-grade"), d, ragSteps(d).Grade)
}

// ragService builds the pipeline tools' service. The pipeline is d's (Step
// Functions on AWS, the local gateway's in-process runner on a laptop); a
// function run alone without one (sam local invoke, the sample-event replay)
// runs the same state machine definition in process over step handlers built
// from d.
func ragService(d lambdafn.Deps) *rag.Service {
	runner := d.Pipeline
	if runner == nil {
		runner = ownPipeline(d)
	}
	return rag.New(d.Table, rag.Options{Generator: generator(d), Runner: runner, Logger: d.Logger})
}

// ownPipeline returns a pipeline.Local over in-process handlers of the
// pipeline's step functions, or nil if the definition cannot be loaded.
func ownPipeline(d lambdafn.Deps) pipeline.Runner {
	all := All()
	steps := map[string]lambda.Handler{}
	for _, task := range catalog.Default().PipelineTasks() {
		if build, ok := all[task.Function]; ok {
			steps[task.Function] = build(d)
		}
	}
	r, err := pipeline.NewLocal(catalog.Default(), invoke.NewLocal(steps, catalog.Default().Timeout))
	if err != nil {
		return nil // rag.Service then answers that the pipeline is not configured
	}
	return r
}

// RAGBasic builds the rag_basic function.
func RAGBasic(d lambdafn.Deps) lambda.Handler {
	return lambdafn.Tool(tool("rag_basic"), d, ragService(d).Basic)
}

// RAGBasicRerank builds the rag_basic_rerank function.
func RAGBasicRerank(d lambdafn.Deps) lambda.Handler {
	return lambdafn.Tool(tool("rag_basic_rerank"), d, ragService(d).BasicRerank)
}

// RAGCRAG builds the rag_crag function.
func RAGCRAG(d lambdafn.Deps) lambda.Handler {
	return lambdafn.Tool(tool("rag_crag"), d, ragService(d).CRAG)
}

// RAGHealthCheck builds the rag_health_check function. It reads the
// recorded outcomes and runs no pipeline.
func RAGHealthCheck(d lambdafn.Deps) lambda.Handler {
	return lambdafn.Tool(tool("rag_health_check"), d, rag.New(d.Table, rag.Options{Logger: d.Logger}).Health)
}

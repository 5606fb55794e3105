package handlers

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/switchboard-dev/switchboard/shared/lambdafn"
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

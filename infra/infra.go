// Package infra holds what the SAM template is made from or refers to that
// is not Go code. template.yaml.tmpl is the template of template.yaml, which
// shared/deploy renders from the catalog (go run ./scripts/generate).
package infra

import _ "embed"

// Template is the text/template source of template.yaml.
//
//go:embed template.yaml.tmpl
var Template string

// RAGPipeline is the Amazon States Language definition of the RAG pipeline
// (rephrase -> retrieve -> grade), the Express state machine the template
// deploys and shared/pipeline runs locally. Its ${...} placeholders are
// filled by the template's DefinitionSubstitutions.
//
//go:embed statemachines/rag_pipeline.asl.json
var RAGPipeline []byte

// RAGPipelineFile is RAGPipeline's path from the repository root, as the
// template's DefinitionUri names it.
const RAGPipelineFile = "infra/statemachines/rag_pipeline.asl.json"

package config

import (
	"strconv"
	"strings"
)

// The environment variables that choose the embedder and the generator.
// README's configuration table lists them.
const (
	EnvEmbedder            = "SWITCHBOARD_EMBEDDER"
	EnvEmbeddingModel      = "SWITCHBOARD_EMBEDDING_MODEL"
	EnvEmbeddingDimensions = "SWITCHBOARD_EMBEDDING_DIMENSIONS"
	EnvGenerator           = "SWITCHBOARD_GENERATOR"
	EnvGenerationModel     = "SWITCHBOARD_GENERATION_MODEL"
	EnvOpenAIBaseURL       = "SWITCHBOARD_OPENAI_BASE_URL"
	EnvOpenAIAPIKey        = "SWITCHBOARD_OPENAI_API_KEY"
	// The models a request may name instead of the configured ones
	// (embedding_model, llm_model), comma-separated, of the same providers.
	EnvEmbeddingModels = "SWITCHBOARD_EMBEDDING_MODELS"
	EnvLLMModels       = "SWITCHBOARD_LLM_MODELS"
	// The multi-vector embedder of late interaction (rag_pylate_colbert).
	EnvMultiVector       = "SWITCHBOARD_MULTIVECTOR"
	EnvMultiVectorModel  = "SWITCHBOARD_MULTIVECTOR_MODEL"
	EnvMultiVectorURL    = "SWITCHBOARD_MULTIVECTOR_URL"
	EnvMultiVectorAPIKey = "SWITCHBOARD_MULTIVECTOR_API_KEY"
)

// Providers chooses the embedder and the generator. Package config/providers
// checks and builds them: config itself links no provider.
type Providers struct {
	// Embedder is offline (if empty), bedrock or openai.
	Embedder string
	// EmbeddingModel names the hosted embedding model. If empty, the
	// provider's default. The offline embedder has no choice of model.
	EmbeddingModel string
	// EmbeddingDims is the vector length. If zero, the model's default; -1
	// records a value that is not a whole number, for providers.Validate to report.
	EmbeddingDims int
	// Generator is offline (if empty), bedrock or openai.
	Generator string
	// GenerationModel names the hosted chat model. If empty, the provider's default.
	GenerationModel string
	// OpenAIBaseURL is the OpenAI-compatible API's base URL, required when
	// either provider is openai.
	OpenAIBaseURL string
	// OpenAIAPIKey is sent as a bearer token; empty for servers that need none.
	OpenAIAPIKey string
	// EmbeddingModels and LLMModels are the other models of the same
	// providers a request may name (embedding_model, llm_model).
	EmbeddingModels, LLMModels []string
	// MultiVector is the multi-vector embedder of late interaction: offline
	// (if empty: the hashing embedder's per-token vectors) or jina (an API
	// speaking Jina's /v1/multi-vector at MultiVectorURL, with
	// MultiVectorModel, authenticating with MultiVectorAPIKey).
	MultiVector, MultiVectorModel, MultiVectorURL, MultiVectorAPIKey string
}

func providersFromEnv(getenv func(string) string) Providers {
	p := Providers{
		Embedder:        strings.ToLower(strings.TrimSpace(getenv(EnvEmbedder))),
		EmbeddingModel:  strings.TrimSpace(getenv(EnvEmbeddingModel)),
		Generator:       strings.ToLower(strings.TrimSpace(getenv(EnvGenerator))),
		GenerationModel: strings.TrimSpace(getenv(EnvGenerationModel)),
		OpenAIBaseURL:   strings.TrimSpace(getenv(EnvOpenAIBaseURL)),
		OpenAIAPIKey:    strings.TrimSpace(getenv(EnvOpenAIAPIKey)),

		MultiVector:       strings.ToLower(strings.TrimSpace(getenv(EnvMultiVector))),
		MultiVectorModel:  strings.TrimSpace(getenv(EnvMultiVectorModel)),
		MultiVectorURL:    strings.TrimSpace(getenv(EnvMultiVectorURL)),
		MultiVectorAPIKey: strings.TrimSpace(getenv(EnvMultiVectorAPIKey)),
		EmbeddingModels:   list(getenv(EnvEmbeddingModels)),
		LLMModels:         list(getenv(EnvLLMModels)),
	}
	if v := strings.TrimSpace(getenv(EnvEmbeddingDimensions)); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			n = -1
		}
		p.EmbeddingDims = n
	}
	return p
}

// list splits a comma-separated value, dropping blanks.
func list(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

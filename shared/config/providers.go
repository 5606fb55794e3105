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
}

func providersFromEnv(getenv func(string) string) Providers {
	p := Providers{
		Embedder:        strings.ToLower(strings.TrimSpace(getenv(EnvEmbedder))),
		EmbeddingModel:  strings.TrimSpace(getenv(EnvEmbeddingModel)),
		Generator:       strings.ToLower(strings.TrimSpace(getenv(EnvGenerator))),
		GenerationModel: strings.TrimSpace(getenv(EnvGenerationModel)),
		OpenAIBaseURL:   strings.TrimSpace(getenv(EnvOpenAIBaseURL)),
		OpenAIAPIKey:    strings.TrimSpace(getenv(EnvOpenAIAPIKey)),
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

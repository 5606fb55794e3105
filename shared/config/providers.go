package config

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/bedrock"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/provider/openai"
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

// The provider names [Providers] accepts.
const (
	ProviderOffline = offline.Name
	ProviderBedrock = bedrock.Name
	ProviderOpenAI  = openai.Name
)

// The models hosted providers use when none is named.
const (
	DefaultBedrockEmbeddingModel  = bedrock.DefaultEmbeddingModel
	DefaultBedrockGenerationModel = bedrock.DefaultGenerationModel
	DefaultOpenAIEmbeddingModel   = "text-embedding-3-small"
	DefaultOpenAIGenerationModel  = "gpt-4o-mini"
)

// MaxEmbeddingDims bounds SWITCHBOARD_EMBEDDING_DIMENSIONS: above every hosted
// model's length (3072 for text-embedding-3-large), low enough that a typo
// cannot make each vector of a store megabytes long.
const MaxEmbeddingDims = 16384

// Providers chooses the embedder and the generator.
type Providers struct {
	// Embedder is offline (if empty), bedrock or openai.
	Embedder string
	// EmbeddingModel names the hosted embedding model. If empty, the
	// provider's default. The offline embedder has no choice of model.
	EmbeddingModel string
	// EmbeddingDims is the vector length. If zero, the model's default; -1
	// records a value that is not a whole number, for Validate to report.
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

func (p Providers) embedder() string  { return orOffline(p.Embedder) }
func (p Providers) generator() string { return orOffline(p.Generator) }

func orOffline(s string) string {
	if s == "" {
		return ProviderOffline
	}
	return s
}

// validate checks p without I/O, naming the variable at fault: it builds the
// hosted clients (their constructors check models, dimensions and URLs) and
// throws them away.
func (p Providers) validate() []error {
	var errs []error
	choice := fmt.Sprintf("one of %s (the default), %s, %s", ProviderOffline, ProviderBedrock, ProviderOpenAI)
	switch p.embedder() {
	case ProviderOffline, ProviderBedrock, ProviderOpenAI:
	default:
		errs = append(errs, fmt.Errorf("%s: %q is not a provider: use %s", EnvEmbedder, p.Embedder, choice))
	}
	switch p.generator() {
	case ProviderOffline, ProviderBedrock, ProviderOpenAI:
	default:
		errs = append(errs, fmt.Errorf("%s: %q is not a provider: use %s", EnvGenerator, p.Generator, choice))
	}
	if p.EmbeddingDims < 0 || p.EmbeddingDims > MaxEmbeddingDims {
		errs = append(errs, fmt.Errorf("%s must be a positive whole number of dimensions, at most %d", EnvEmbeddingDimensions, MaxEmbeddingDims))
	}
	if p.embedder() == ProviderOffline && p.EmbeddingModel != "" {
		errs = append(errs, fmt.Errorf("%s: the offline embedder has no choice of model; set %s to %s or %s to use %q",
			EnvEmbeddingModel, EnvEmbedder, ProviderBedrock, ProviderOpenAI, p.EmbeddingModel))
	}
	if p.generator() == ProviderOffline && p.GenerationModel != "" {
		errs = append(errs, fmt.Errorf("%s: the offline generator has no choice of model; set %s to %s or %s to use %q",
			EnvGenerationModel, EnvGenerator, ProviderBedrock, ProviderOpenAI, p.GenerationModel))
	}
	if errs != nil {
		return errs
	}
	if p.embedder() == ProviderOpenAI || p.generator() == ProviderOpenAI {
		if p.OpenAIBaseURL == "" {
			return []error{fmt.Errorf("%s is required when %s or %s is %s: the API's base URL, such as https://api.openai.com",
				EnvOpenAIBaseURL, EnvEmbedder, EnvGenerator, ProviderOpenAI)}
		}
		if _, err := openai.NewClient(p.OpenAIBaseURL, "", nil); err != nil {
			return []error{fmt.Errorf("%s: %w", EnvOpenAIBaseURL, err)}
		}
	}
	if _, _, err := p.build(stubRuntime{}); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// build constructs the embedder and generator p names, with rt as the
// Bedrock client. Errors name the variable at fault.
func (p Providers) build(rt bedrock.Runtime) (provider.Embedder, provider.Generator, error) {
	var oa *openai.Client
	if p.embedder() == ProviderOpenAI || p.generator() == ProviderOpenAI {
		c, err := openai.NewClient(p.OpenAIBaseURL, p.OpenAIAPIKey, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", EnvOpenAIBaseURL, err)
		}
		oa = c
	}
	var (
		emb provider.Embedder
		err error
	)
	switch p.embedder() {
	case ProviderOffline:
		emb = offline.NewEmbedder(p.EmbeddingDims)
	case ProviderBedrock:
		emb, err = bedrock.NewEmbedder(rt, &bedrock.EmbedderOptions{Model: p.EmbeddingModel, Dims: p.EmbeddingDims})
	case ProviderOpenAI:
		model := p.EmbeddingModel
		if model == "" {
			model = DefaultOpenAIEmbeddingModel
		}
		emb, err = openai.NewEmbedder(oa, model, &openai.EmbedderOptions{Dims: p.EmbeddingDims})
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s, %s: %w", EnvEmbeddingModel, EnvEmbeddingDimensions, err)
	}
	var gen provider.Generator
	switch p.generator() {
	case ProviderOffline:
		gen = offline.NewGenerator()
	case ProviderBedrock:
		model := p.GenerationModel
		if model == "" {
			model = DefaultBedrockGenerationModel
		}
		gen, err = bedrock.NewGenerator(rt, model)
	case ProviderOpenAI:
		model := p.GenerationModel
		if model == "" {
			model = DefaultOpenAIGenerationModel
		}
		gen, err = openai.NewGenerator(oa, model)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", EnvGenerationModel, err)
	}
	return emb, gen, nil
}

// OpenProviders builds the embedder and generator c names. A Bedrock client
// comes from [Config.AWS] (so AWS_REGION and AWS_ENDPOINT_URL_BEDROCK_RUNTIME
// apply). Offline choices are announced on warn.
func (c *Config) OpenProviders(ctx context.Context, warn io.Writer) (provider.Embedder, provider.Generator, error) {
	if errs := c.Providers.validate(); errs != nil {
		return nil, nil, errors.Join(errs...)
	}
	var rt bedrock.Runtime
	if c.Providers.embedder() == ProviderBedrock || c.Providers.generator() == ProviderBedrock {
		cfg, err := c.AWS(ctx)
		if err != nil {
			return nil, nil, err
		}
		rt = bedrockruntime.NewFromConfig(cfg)
	}
	emb, gen, err := c.Providers.build(rt)
	if err != nil {
		return nil, nil, err
	}
	if c.Providers.embedder() == ProviderOffline {
		fmt.Fprintf(warn, "WARNING: embeddings come from the offline hashing embedder (provider %q, model %q, %d dimensions): no embedding model is configured (set %s)\n",
			emb.Provider(), emb.Model(), emb.Dims(), EnvEmbedder)
	}
	if c.Providers.generator() == ProviderOffline {
		fmt.Fprintf(warn, "WARNING: answers, rephrasings and grades come from the offline extractive generator (provider %q, model %q): no language model is configured (set %s)\n",
			offline.Name, offline.GeneratorModel, EnvGenerator)
	}
	return emb, gen, nil
}

// stubRuntime stands in for the Bedrock client while validating: the
// constructors keep it and never call it.
type stubRuntime struct{ bedrock.Runtime }

// Package providers checks and opens the embedder and the generator a
// [config.Config] names: offline (the default), Amazon Bedrock or an
// OpenAI-compatible API. It is a package of its own so that only the
// functions that embed or generate link the Bedrock client.
//
//	if err := providers.Validate(cfg.Providers); err != nil { ... } // errors name the variable
//	emb, gen, err := providers.Open(ctx, &cfg, os.Stderr)
package providers

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/config/secrets"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/bedrock"
	"github.com/switchboard-dev/switchboard/shared/provider/jina"
	"github.com/switchboard-dev/switchboard/shared/provider/multivector"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/provider/openai"
)

// The provider names [config.Providers] accepts.
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

func embedderOf(p config.Providers) string  { return orOffline(p.Embedder) }
func generatorOf(p config.Providers) string { return orOffline(p.Generator) }

func orOffline(s string) string {
	if s == "" {
		return ProviderOffline
	}
	return s
}

// Validate checks p without I/O, naming the variable at fault: it builds
// the hosted clients (their constructors check models, dimensions and URLs)
// and throws them away.
func Validate(p config.Providers) error { return errors.Join(validate(p)...) }

func validate(p config.Providers) []error {
	var errs []error
	choice := fmt.Sprintf("one of %s (the default), %s, %s", ProviderOffline, ProviderBedrock, ProviderOpenAI)
	switch embedderOf(p) {
	case ProviderOffline, ProviderBedrock, ProviderOpenAI:
	default:
		errs = append(errs, fmt.Errorf("%s: %q is not a provider: use %s", config.EnvEmbedder, p.Embedder, choice))
	}
	switch generatorOf(p) {
	case ProviderOffline, ProviderBedrock, ProviderOpenAI:
	default:
		errs = append(errs, fmt.Errorf("%s: %q is not a provider: use %s", config.EnvGenerator, p.Generator, choice))
	}
	if p.EmbeddingDims < 0 || p.EmbeddingDims > MaxEmbeddingDims {
		errs = append(errs, fmt.Errorf("%s must be a positive whole number of dimensions, at most %d", config.EnvEmbeddingDimensions, MaxEmbeddingDims))
	}
	if embedderOf(p) == ProviderOffline && p.EmbeddingModel != "" {
		errs = append(errs, fmt.Errorf("%s: the offline embedder has no choice of model; set %s to %s or %s to use %q",
			config.EnvEmbeddingModel, config.EnvEmbedder, ProviderBedrock, ProviderOpenAI, p.EmbeddingModel))
	}
	if generatorOf(p) == ProviderOffline && p.GenerationModel != "" {
		errs = append(errs, fmt.Errorf("%s: the offline generator has no choice of model; set %s to %s or %s to use %q",
			config.EnvGenerationModel, config.EnvGenerator, ProviderBedrock, ProviderOpenAI, p.GenerationModel))
	}
	if _, err := buildMultiVector(p); err != nil {
		errs = append(errs, err)
	}
	if errs != nil {
		return errs
	}
	if embedderOf(p) == ProviderOpenAI || generatorOf(p) == ProviderOpenAI {
		if p.OpenAIBaseURL == "" {
			return []error{fmt.Errorf("%s is required when %s or %s is %s: the API's base URL, such as https://api.openai.com",
				config.EnvOpenAIBaseURL, config.EnvEmbedder, config.EnvGenerator, ProviderOpenAI)}
		}
		if _, err := openai.NewClient(p.OpenAIBaseURL, "", nil); err != nil {
			return []error{fmt.Errorf("%s: %w", config.EnvOpenAIBaseURL, err)}
		}
	}
	if _, _, err := build(p, stubRuntime{}); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// build constructs the embedder and generator p names, with rt as the
// Bedrock client. Errors name the variable at fault.
func build(p config.Providers, rt bedrock.Runtime) (provider.Embedder, provider.Generator, error) {
	var oa *openai.Client
	if embedderOf(p) == ProviderOpenAI || generatorOf(p) == ProviderOpenAI {
		c, err := openai.NewClient(p.OpenAIBaseURL, p.OpenAIAPIKey, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", config.EnvOpenAIBaseURL, err)
		}
		oa = c
	}
	var (
		emb provider.Embedder
		err error
	)
	switch embedderOf(p) {
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
		return nil, nil, fmt.Errorf("%s, %s: %w", config.EnvEmbeddingModel, config.EnvEmbeddingDimensions, err)
	}
	gen, genModel, err := buildGenerator(generatorOf(p), p.GenerationModel, rt, oa)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", config.EnvGenerationModel, err)
	}
	// The models a request may name instead (embedding_model, llm_model):
	// the same providers', each built as the configured one is.
	var embs []provider.Embedder
	for _, m := range p.EmbeddingModels {
		var e provider.Embedder
		switch embedderOf(p) {
		case ProviderOffline:
			err = fmt.Errorf("the offline embedder has no other model than %s", emb.Model())
		case ProviderBedrock:
			e, err = bedrock.NewEmbedder(rt, &bedrock.EmbedderOptions{Model: m})
		case ProviderOpenAI:
			e, err = openai.NewEmbedder(oa, m, nil)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %s: %w", config.EnvEmbeddingModels, m, err)
		}
		embs = append(embs, e)
	}
	gens := map[string]provider.Generator{}
	for _, m := range p.LLMModels {
		if generatorOf(p) == ProviderOffline {
			return nil, nil, fmt.Errorf("%s: %s: the offline generator has no other model than %s", config.EnvLLMModels, m, genModel)
		}
		if gens[m], _, err = buildGenerator(generatorOf(p), m, rt, oa); err != nil {
			return nil, nil, fmt.Errorf("%s: %s: %w", config.EnvLLMModels, m, err)
		}
	}
	emb, gen = provider.WithEmbedders(emb, embs...), provider.WithGenerators(gen, genModel, gens)
	return emb, gen, nil
}

// buildGenerator constructs the generator of provider name and model (its
// default when empty), and returns the model it answers with.
func buildGenerator(name, model string, rt bedrock.Runtime, oa *openai.Client) (provider.Generator, string, error) {
	switch name {
	case ProviderBedrock:
		model = cmp.Or(model, DefaultBedrockGenerationModel)
		g, err := bedrock.NewGenerator(rt, model)
		return g, model, err
	case ProviderOpenAI:
		model = cmp.Or(model, DefaultOpenAIGenerationModel)
		g, err := openai.NewGenerator(oa, model)
		return g, model, err
	}
	return offline.NewGenerator(), offline.GeneratorModel, nil
}

// Open checks ([Validate]) and builds the embedder and generator c names,
// after reading the OpenAI key from Secrets Manager when its variable names
// a secret ([secrets.Resolve]). A
// Bedrock client comes from [config.Config.AWS] (so AWS_REGION and
// AWS_ENDPOINT_URL_BEDROCK_RUNTIME apply). Offline choices are announced on
// warn.
func Open(ctx context.Context, c *config.Config, warn io.Writer) (provider.Embedder, provider.Generator, error) {
	// On AWS the variable names the key's secret (package config/secrets).
	if err := secrets.Resolve(ctx, c, config.EnvOpenAIAPIKey, &c.Providers.OpenAIAPIKey); err != nil {
		return nil, nil, err
	}
	if err := Validate(c.Providers); err != nil {
		return nil, nil, err
	}
	var rt bedrock.Runtime
	if embedderOf(c.Providers) == ProviderBedrock || generatorOf(c.Providers) == ProviderBedrock {
		cfg, err := c.AWS(ctx)
		if err != nil {
			return nil, nil, err
		}
		rt = bedrockruntime.NewFromConfig(cfg)
	}
	emb, gen, err := build(c.Providers, rt)
	if err != nil {
		return nil, nil, err
	}
	if embedderOf(c.Providers) == ProviderOffline {
		fmt.Fprintf(warn, "WARNING: embeddings come from the offline hashing embedder (provider %q, model %q, %d dimensions): no embedding model is configured (set %s)\n",
			emb.Provider(), emb.Model(), emb.Dims(), config.EnvEmbedder)
	}
	if generatorOf(c.Providers) == ProviderOffline {
		fmt.Fprintf(warn, "WARNING: answers, rephrasings and grades come from the offline extractive generator (provider %q, model %q): no language model is configured (set %s)\n",
			offline.Name, offline.GeneratorModel, config.EnvGenerator)
	}
	return emb, gen, nil
}

// The multi-vector embedders [config.Providers] accepts, and the model and
// URL of Jina's API when none is named.
const (
	MultiVectorOffline = offline.Name
	MultiVectorJina    = jina.Name
	DefaultJinaModel   = "jina-colbert-v2"
	DefaultJinaURL     = "https://api.jina.ai"
)

// buildMultiVector constructs the multi-vector embedder p names. Errors name
// the variable at fault.
func buildMultiVector(p config.Providers) (multivector.Embedder, error) {
	switch orOffline(p.MultiVector) {
	case MultiVectorOffline:
		if p.MultiVectorModel != "" || p.MultiVectorURL != "" {
			return nil, fmt.Errorf("%s, %s: the offline multi-vector embedder has no model or URL; set %s to %s to use them",
				config.EnvMultiVectorModel, config.EnvMultiVectorURL, config.EnvMultiVector, MultiVectorJina)
		}
		return multivector.NewHashing(0), nil
	case MultiVectorJina:
		e, err := jina.NewEmbedder(cmp.Or(p.MultiVectorURL, DefaultJinaURL), p.MultiVectorAPIKey, cmp.Or(p.MultiVectorModel, DefaultJinaModel), nil)
		if err != nil {
			return nil, fmt.Errorf("%s, %s: %w", config.EnvMultiVectorURL, config.EnvMultiVectorModel, err)
		}
		return e, nil
	}
	return nil, fmt.Errorf("%s: %q is not a multi-vector embedder: use %s (the default) or %s", config.EnvMultiVector, p.MultiVector, MultiVectorOffline, MultiVectorJina)
}

// OpenMultiVector checks ([Validate]) and builds the multi-vector embedder
// c names, for late interaction, after reading its API key from Secrets
// Manager when its variable names a secret ([secrets.Resolve]). The offline choice is announced on warn.
func OpenMultiVector(ctx context.Context, c *config.Config, warn io.Writer) (multivector.Embedder, error) {
	// On AWS the variable names the key's secret (package config/secrets).
	if err := secrets.Resolve(ctx, c, config.EnvMultiVectorAPIKey, &c.Providers.MultiVectorAPIKey); err != nil {
		return nil, err
	}
	if err := Validate(c.Providers); err != nil {
		return nil, err
	}
	e, err := buildMultiVector(c.Providers)
	if err != nil {
		return nil, err
	}
	if orOffline(c.Providers.MultiVector) == MultiVectorOffline {
		fmt.Fprintf(warn, "WARNING: late interaction's token vectors come from the offline hashing embedder (provider %q, model %q, %d dimensions): no multi-vector model is configured (set %s)\n",
			e.Provider(), e.Model(), e.Dims(), config.EnvMultiVector)
	}
	return e, nil
}

// stubRuntime stands in for the Bedrock client while validating: the
// constructors keep it and never call it.
type stubRuntime struct{ bedrock.Runtime }

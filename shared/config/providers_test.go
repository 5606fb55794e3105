package config_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/config/providers"
	"github.com/switchboard-dev/switchboard/shared/config/secrets/secretstest"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/bedrock"
	"github.com/switchboard-dev/switchboard/shared/provider/multivector"
	"github.com/switchboard-dev/switchboard/shared/provider/openai"
)

func TestFromEnvReadsTheProviderVariables(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want config.Providers
	}{
		{"NothingSetMeansOffline", map[string]string{}, config.Providers{}},
		{"EverySetting", map[string]string{
			config.EnvEmbedder: " OpenAI ", config.EnvEmbeddingModel: "text-embedding-3-large", config.EnvEmbeddingDimensions: "1024",
			config.EnvGenerator: "bedrock", config.EnvGenerationModel: "eu.amazon.nova-lite-v1:0",
			config.EnvOpenAIBaseURL: "https://api.openai.com", config.EnvOpenAIAPIKey: "sk-1",
		}, config.Providers{Embedder: "openai", EmbeddingModel: "text-embedding-3-large", EmbeddingDims: 1024,
			Generator: "bedrock", GenerationModel: "eu.amazon.nova-lite-v1:0", OpenAIBaseURL: "https://api.openai.com", OpenAIAPIKey: "sk-1"}},
		{"DimensionsThatAreNotANumber", map[string]string{config.EnvEmbeddingDimensions: "big"}, config.Providers{EmbeddingDims: -1}},
		{"DimensionsBelowOne", map[string]string{config.EnvEmbeddingDimensions: "0"}, config.Providers{EmbeddingDims: -1}},
		{"AllowListsAndTheMultiVectorEmbedder", map[string]string{
			config.EnvEmbeddingModels: " text-embedding-3-large, ,text-embedding-3-small", config.EnvLLMModels: "gpt-4o",
			config.EnvMultiVector: "Jina", config.EnvMultiVectorModel: "jina-colbert-v2", config.EnvMultiVectorURL: "https://api.jina.ai", config.EnvMultiVectorAPIKey: "jina_1",
		}, config.Providers{EmbeddingModels: []string{"text-embedding-3-large", "text-embedding-3-small"}, LLMModels: []string{"gpt-4o"},
			MultiVector: "jina", MultiVectorModel: "jina-colbert-v2", MultiVectorURL: "https://api.jina.ai", MultiVectorAPIKey: "jina_1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := config.FromEnv(func(k string) string { return tc.env[k] }).Providers
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Providers mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateAcceptsEveryProviderCombination(t *testing.T) {
	openAI := "https://api.openai.com"
	for _, tc := range []struct {
		name string
		p    config.Providers
	}{
		{"OfflineByDefault", config.Providers{}},
		{"OfflineNamedWithDimensions", config.Providers{Embedder: "offline", Generator: "offline", EmbeddingDims: 384}},
		{"BedrockDefaults", config.Providers{Embedder: "bedrock", Generator: "bedrock"}},
		{"BedrockShortVectorsAndAProfile", config.Providers{Embedder: "bedrock", EmbeddingDims: 512, Generator: "bedrock", GenerationModel: "us.anthropic.claude-3-5-haiku-20241022-v1:0"}},
		{"OpenAIDefaults", config.Providers{Embedder: "openai", Generator: "openai", OpenAIBaseURL: openAI, OpenAIAPIKey: "sk-1"}},
		{"OpenAIShortenedVectors", config.Providers{Embedder: "openai", EmbeddingModel: "text-embedding-3-large", EmbeddingDims: 256, OpenAIBaseURL: openAI}},
		{"ALocalServerWithItsOwnModel", config.Providers{Embedder: "openai", EmbeddingModel: "nomic-embed-text", EmbeddingDims: 768,
			Generator: "openai", GenerationModel: "llama3.2", OpenAIBaseURL: "http://localhost:11434/v1"}},
		{"MixedProviders", config.Providers{Embedder: "bedrock", Generator: "openai", OpenAIBaseURL: openAI}},
		{"OtherModelsAllowedPerRequest", config.Providers{Embedder: "openai", Generator: "openai", OpenAIBaseURL: openAI,
			EmbeddingModels: []string{"text-embedding-3-large"}, LLMModels: []string{"gpt-4o", "gpt-4.1-mini"}}},
		{"JinaMultiVector", config.Providers{MultiVector: "jina", MultiVectorAPIKey: "jina_1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := providers.Validate(tc.p); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

func TestValidateNamesTheProviderVariableAtFault(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    config.Providers
		want string
	}{
		{"UnknownEmbedder", config.Providers{Embedder: "cohere"}, config.EnvEmbedder + `: "cohere" is not a provider`},
		{"UnknownGenerator", config.Providers{Generator: "anthropic"}, config.EnvGenerator + `: "anthropic" is not a provider`},
		{"DimensionsNotANumber", config.Providers{EmbeddingDims: -1}, config.EnvEmbeddingDimensions + " must be a positive whole number"},
		{"DimensionsBeyondAnyModel", config.Providers{EmbeddingDims: 1 << 20}, config.EnvEmbeddingDimensions + " must be a positive whole number"},
		{"OfflineEmbedderWithAModel", config.Providers{EmbeddingModel: "amazon.titan-embed-text-v2:0"}, config.EnvEmbeddingModel},
		{"OfflineGeneratorWithAModel", config.Providers{GenerationModel: "gpt-4o-mini"}, config.EnvGenerationModel},
		{"OpenAIEmbedderWithoutBaseURL", config.Providers{Embedder: "openai"}, config.EnvOpenAIBaseURL + " is required"},
		{"OpenAIGeneratorWithoutBaseURL", config.Providers{Generator: "openai"}, config.EnvOpenAIBaseURL + " is required"},
		{"BaseURLWithoutScheme", config.Providers{Generator: "openai", OpenAIBaseURL: "api.openai.com"}, config.EnvOpenAIBaseURL + ":"},
		{"BedrockDimensionsTitanCannotMake", config.Providers{Embedder: "bedrock", EmbeddingDims: 384}, config.EnvEmbeddingDimensions},
		{"OpenAIModelOfUnknownLength", config.Providers{Embedder: "openai", EmbeddingModel: "my-embedder", OpenAIBaseURL: "https://x.example.com"}, config.EnvEmbeddingDimensions},
		{"OpenAIDimensionsAboveTheModels", config.Providers{Embedder: "openai", EmbeddingDims: 4096, OpenAIBaseURL: "https://api.openai.com"}, config.EnvEmbeddingDimensions},
		{"OfflineEmbedderWithOtherModelsAllowed", config.Providers{EmbeddingModels: []string{"hashing-v2"}}, config.EnvEmbeddingModels + ": hashing-v2"},
		{"OfflineGeneratorWithOtherModelsAllowed", config.Providers{LLMModels: []string{"gpt-4o"}}, config.EnvLLMModels + ": gpt-4o"},
		{"AnAllowedOpenAIModelOfUnknownLength", config.Providers{Embedder: "openai", EmbeddingModels: []string{"my-embedder"}, OpenAIBaseURL: "https://x.example.com"}, config.EnvEmbeddingModels + ": my-embedder"},
		{"UnknownMultiVectorEmbedder", config.Providers{MultiVector: "cohere"}, config.EnvMultiVector + `: "cohere"`},
		{"JinaWithABadURL", config.Providers{MultiVector: "jina", MultiVectorURL: "api.jina.ai"}, config.EnvMultiVectorURL},
		{"OfflineMultiVectorWithAModel", config.Providers{MultiVectorModel: "jina-colbert-v2"}, config.EnvMultiVectorModel},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := providers.Validate(tc.p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("providers.Validate = %v, want an error naming %s", err, tc.want)
			}
		})
	}
}

func TestOpenBuildsTheConfiguredProviders(t *testing.T) {
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	for _, tc := range []struct {
		name          string
		p             config.Providers
		wantEmbedder  string // provider/model/dims
		wantGenerator any
		wantWarnings  []string
	}{
		{"Offline", config.Providers{},
			"offline/hashing-v1/384", nil, []string{
				"WARNING: embeddings come from the offline hashing embedder",
				"WARNING: answers, rephrasings and grades come from the offline extractive generator",
			}},
		{"Bedrock", config.Providers{Embedder: "bedrock", EmbeddingDims: 512, Generator: "bedrock"},
			"bedrock/amazon.titan-embed-text-v2:0/512", &bedrock.Generator{}, nil},
		{"OpenAI", config.Providers{Embedder: "openai", Generator: "openai", OpenAIBaseURL: "https://api.openai.com"},
			"openai/text-embedding-3-small/1536", &openai.Generator{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config.Local(filepath.Join(t.TempDir(), "data"))
			cfg.Providers = tc.p
			var warn bytes.Buffer
			emb, gen, err := providers.Open(context.Background(), &cfg, &warn)
			if err != nil {
				t.Fatal(err)
			}
			var gotEmbedder string
			if emb != nil {
				gotEmbedder = emb.Provider() + "/" + emb.Model() + "/" + strconv.Itoa(emb.Dims())
			}
			if gotEmbedder != tc.wantEmbedder {
				t.Errorf("embedder %q, want %q", gotEmbedder, tc.wantEmbedder)
			}
			if gen == nil {
				t.Fatal("no generator")
			}
			if tc.wantGenerator != nil {
				if got, want := fmt.Sprintf("%T", gen), fmt.Sprintf("%T", tc.wantGenerator); got != want {
					t.Errorf("generator %s, want %s", got, want)
				}
			}
			for _, w := range tc.wantWarnings {
				if !strings.Contains(warn.String(), w) {
					t.Errorf("warnings %q lack %q", warn.String(), w)
				}
			}
			if tc.wantWarnings == nil && strings.Contains(warn.String(), "offline extractive generator") {
				t.Errorf("a hosted generator was announced as offline: %q", warn.String())
			}
		})
	}
}

// useSecretsStandIn points the AWS clients at the Secrets Manager stand-in,
// with credentials to sign with and nothing from the machine's configuration.
func useSecretsStandIn(t *testing.T, sm *secretstest.Server) {
	t.Helper()
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL_SECRETS_MANAGER": sm.URL, "AWS_REGION": secretstest.Region,
		"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_SESSION_TOKEN": "",
		"AWS_PROFILE": "", "AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull,
	} {
		t.Setenv(k, v)
	}
}

// The key is the variable's value locally, and read from the Secrets
// Manager secret the variable names on AWS.
func TestOpenPassesTheOpenAIURLAndKeyToTheClient(t *testing.T) {
	secret := secretstest.ARN("openai")
	sm := secretstest.New(t, map[string]string{secret: "sk-from-secrets-manager"})
	useSecretsStandIn(t, sm)
	for _, tc := range []struct{ name, setting, want string }{
		{"AKeyInTheVariable", "sk-local", "sk-local"},
		{"AKeyInASecretTheVariableNames", secret, "sk-from-secrets-manager"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var auth, path string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				auth, path = r.Header.Get("Authorization"), r.URL.Path
				w.Header().Set("Content-Type", "application/json")
				json.NewEncoder(w).Encode(map[string]any{"model": "llama3.2",
					"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": "yes"}, "finish_reason": "stop"}},
					"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 1}})
			}))
			defer srv.Close()
			env := map[string]string{config.EnvTable: config.FilePrefix + filepath.Join(t.TempDir(), "db"),
				config.EnvGenerator: "openai", config.EnvGenerationModel: "llama3.2", config.EnvOpenAIBaseURL: srv.URL + "/v1", config.EnvOpenAIAPIKey: tc.setting}
			cfg := config.FromEnv(func(k string) string { return env[k] })
			_, gen, err := providers.Open(context.Background(), &cfg, &bytes.Buffer{})
			if err != nil {
				t.Fatal(err)
			}
			g, err := gen.Generate(context.Background(), provider.GenerateRequest{Task: provider.TaskGrade, Question: "q?", Documents: []string{"d"}})
			if err != nil {
				t.Fatal(err)
			}
			if g.Text != "yes" || g.Provider != "openai" || g.Model != "llama3.2" {
				t.Errorf("Generate = %+v, want yes from openai llama3.2", g)
			}
			if auth != "Bearer "+tc.want || path != "/v1/chat/completions" {
				t.Errorf("request to %s with Authorization %q, want /v1/chat/completions with Bearer %s", path, auth, tc.want)
			}
		})
	}
	if reads := sm.Reads(); len(reads) != 1 || reads[0] != secret {
		t.Errorf("Secrets Manager reads %v, want the one secret once", reads)
	}
}

// The multi-vector API's key, like the OpenAI key: the variable's value
// locally, the Secrets Manager secret the variable names on AWS, read once.
func TestOpenMultiVectorPassesItsKeyToTheAPI(t *testing.T) {
	secret := secretstest.ARN("jina")
	sm := secretstest.New(t, map[string]string{secret: "jina_from_secrets_manager"})
	useSecretsStandIn(t, sm)
	for _, tc := range []struct{ name, setting, want string }{
		{"a key in the variable", "jina_local", "jina_local"},
		{"a key in a secret the variable names", secret, "jina_from_secrets_manager"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var auth string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				auth = r.Header.Get("Authorization")
				vec := make([]float32, 128)
				vec[0] = 1
				w.Header().Set("Content-Type", "application/json")
				json.NewEncoder(w).Encode(map[string]any{"model": "jina-colbert-v2",
					"data": []any{map[string]any{"index": 0, "embeddings": [][]float32{vec}}}})
			}))
			defer srv.Close()
			env := map[string]string{config.EnvTable: config.FilePrefix + filepath.Join(t.TempDir(), "db"),
				config.EnvMultiVector: "jina", config.EnvMultiVectorURL: srv.URL, config.EnvMultiVectorAPIKey: tc.setting}
			cfg := config.FromEnv(func(k string) string { return env[k] })
			e, err := providers.OpenMultiVector(context.Background(), &cfg, &bytes.Buffer{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.EmbedTokens(context.Background(), multivector.Request{Texts: []string{"toothbrush"}, Purpose: provider.ForQuery}); err != nil {
				t.Fatal(err)
			}
			if auth != "Bearer "+tc.want {
				t.Errorf("Authorization %q, want Bearer %s", auth, tc.want)
			}
		})
	}
	if reads := sm.Reads(); len(reads) != 1 || reads[0] != secret {
		t.Errorf("Secrets Manager reads %v, want the one secret once", reads)
	}
}

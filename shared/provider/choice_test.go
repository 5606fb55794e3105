package provider_test

import (
	"context"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
)

// named is an embedder under another model name.
type named struct {
	provider.Embedder
	model string
}

func (n named) Model() string { return n.model }

// model is a generator that answers with its model's name.
type model string

func (m model) Generate(context.Context, provider.GenerateRequest) (provider.Generation, error) {
	return provider.Generation{Text: string(m), Model: string(m)}, nil
}

func wantRefused(t *testing.T, err error, field, names string) {
	t.Helper()
	f, ok := err.(*fault.Error)
	if !ok || f.Kind != fault.KindInvalid || f.Field != field || !strings.Contains(f.Message, names) {
		t.Errorf("error %v, want invalid_argument naming %s and %s", err, field, names)
	}
}

func TestEmbedderForPicksAnAllowedModelAndRefusesOthers(t *testing.T) {
	def := offline.NewEmbedder(16)
	other := named{offline.NewEmbedder(16), "other-v2"}
	e := provider.WithEmbedders(def, other)
	for _, tc := range []struct{ model, want string }{{"", def.Model()}, {def.Model(), def.Model()}, {"other-v2", "other-v2"}} {
		got, err := provider.EmbedderFor(e, tc.model)
		if err != nil || got.Model() != tc.want {
			t.Errorf("EmbedderFor(%q) = %v, %v; want %s", tc.model, got, err, tc.want)
		}
	}
	_, err := provider.EmbedderFor(e, "text-embedding-3-large")
	wantRefused(t, err, "embedding_model", "hashing-v1, other-v2")
	_, err = provider.EmbedderFor(def, "other-v2")
	wantRefused(t, err, "embedding_model", def.Model())
}

func TestGeneratorForPicksAnAllowedModelAndRefusesOthers(t *testing.T) {
	g := provider.WithGenerators(model("small"), "small", map[string]provider.Generator{"large": model("large")})
	for _, tc := range []struct{ model, want string }{{"", "small"}, {"small", "small"}, {"large", "large"}} {
		got, err := provider.GeneratorFor(g, tc.model)
		if err != nil {
			t.Fatalf("GeneratorFor(%q): %v", tc.model, err)
		}
		if out, _ := got.Generate(context.Background(), provider.GenerateRequest{}); out.Model != tc.want {
			t.Errorf("GeneratorFor(%q) answers with %s, want %s", tc.model, out.Model, tc.want)
		}
	}
	_, err := provider.GeneratorFor(g, "huge")
	wantRefused(t, err, "llm_model", "large, small")
	_, err = provider.GeneratorFor(model("plain"), "plain")
	wantRefused(t, err, "llm_model", "no other model")
}

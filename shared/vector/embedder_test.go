package vector_test

import (
	"context"
	"errors"

	"github.com/switchboard-dev/switchboard/shared/provider"
)

// namedEmbedder names an embedder without embedding anything: the store
// tests need only its name.
type namedEmbedder struct{}

func (namedEmbedder) Embed(context.Context, provider.EmbedRequest) (provider.Embeddings, error) {
	return provider.Embeddings{}, errors.New("not used")
}
func (namedEmbedder) Provider() string { return "test" }
func (namedEmbedder) Model() string    { return "named" }
func (namedEmbedder) Dims() int        { return 8 }

func testEmbedder() provider.Embedder { return namedEmbedder{} }

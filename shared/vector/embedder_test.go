package vector_test

import (
	"context"
	"errors"

	"github.com/switchboard-dev/switchboard/shared/provider"
)

// namedEmbedder names an embedder without embedding anything: the store
// tests need only its name.
type namedEmbedder struct{ dims int }

func (namedEmbedder) Embed(context.Context, provider.EmbedRequest) (provider.Embeddings, error) {
	return provider.Embeddings{}, errors.New("not used")
}
func (namedEmbedder) Provider() string { return "test" }
func (namedEmbedder) Model() string    { return "named" }
func (e namedEmbedder) Dims() int      { return e.dims }

func testEmbedder() provider.Embedder { return namedEmbedder{8} }

func otherEmbedder() provider.Embedder { return namedEmbedder{16} }

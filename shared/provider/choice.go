package provider

import (
	"slices"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/fault"
)

// Per-request model overrides: a request may name another embedding model
// (embedding_model) or language model (llm_model) among those the
// configuration allows. The configured embedder and generator carry the
// allowed others ([WithEmbedders], [WithGenerators]); [EmbedderFor] and
// [GeneratorFor] pick one by name, so code that never overrides sees the
// configured one unchanged.

// embedders is an embedder with the others a request may choose.
type embedders struct {
	Embedder
	others map[string]Embedder
}

// WithEmbedders returns def, able to answer with the embedders others too,
// by model name ([EmbedderFor]).
func WithEmbedders(def Embedder, others ...Embedder) Embedder {
	if len(others) == 0 {
		return def
	}
	m := map[string]Embedder{}
	for _, o := range others {
		m[o.Model()] = o
	}
	return &embedders{Embedder: def, others: m}
}

// EmbedderFor returns e's embedder of model: e itself when model is empty or
// e's own, another one e allows ([WithEmbedders]), or an invalid_argument
// error naming embedding_model and the models allowed.
func EmbedderFor(e Embedder, model string) (Embedder, error) {
	if model == "" || model == e.Model() {
		return e, nil
	}
	allowed := []string{e.Model()}
	if c, ok := e.(*embedders); ok {
		if o, ok := c.others[model]; ok {
			return o, nil
		}
		for m := range c.others {
			allowed = append(allowed, m)
		}
	}
	return nil, notAllowed("embedding_model", model, allowed)
}

// generators is a generator that also names the model it answers with,
// and the others a request may choose.
type generators struct {
	Generator
	model  string
	others map[string]Generator
}

// WithGenerators returns def, whose model is model, able to answer with the
// generators others too, by their model names ([GeneratorFor]); def itself
// when there are none.
func WithGenerators(def Generator, model string, others map[string]Generator) Generator {
	if len(others) == 0 {
		return def
	}
	return &generators{Generator: def, model: model, others: others}
}

// GeneratorFor returns g's generator of model: g itself when model is empty
// or g's own, another one g allows ([WithGenerators]), or an
// invalid_argument error naming llm_model and the models allowed. A g that
// allows no others takes no llm_model at all.
func GeneratorFor(g Generator, model string) (Generator, error) {
	if model == "" {
		return g, nil
	}
	c, ok := g.(*generators)
	if !ok {
		return nil, notAllowed("llm_model", model, nil)
	}
	if model == c.model {
		return g, nil
	}
	if o, ok := c.others[model]; ok {
		return o, nil
	}
	allowed := []string{c.model}
	for m := range c.others {
		allowed = append(allowed, m)
	}
	return nil, notAllowed("llm_model", model, allowed)
}

func notAllowed(field, model string, allowed []string) error {
	if len(allowed) == 0 {
		return fault.Invalid(field, "%q is not allowed: this server allows no other model than its configured one; omit %s", model, field)
	}
	slices.Sort(allowed)
	return fault.Invalid(field, "%q is not allowed: use one of %s, or omit %s for the configured one", model, strings.Join(allowed, ", "), field)
}

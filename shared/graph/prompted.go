package graph

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/sync/errgroup"

	"github.com/switchboard-dev/switchboard/shared/prompt"
	"github.com/switchboard-dev/switchboard/shared/provider"
)

// Bounds of a [Prompted] reply: a reply past them is refused.
const (
	MaxReplyBytes     = 64 << 10
	MaxReplyEntities  = 32
	MaxReplyRelations = 64
)

// Bounds of a [Prompted] extraction's calls.
const (
	// MaxPromptedChunks is how many chunks of a document go to the
	// generator; the rest are extracted by the fallback (a document of
	// 20,000 chunks would otherwise make 20,000 calls in one ingest).
	MaxPromptedChunks = 128
	// promptedConcurrency is how many chunks of a document are extracted at once.
	promptedConcurrency = 4
)

// Prompted is an [Extractor] backed by a generator: each chunk goes to
// Generator with the extraction prompt (System, as an answer task whose
// system prompt is overridden, so every backend renders it), and the reply
// is validated against the schema the prompt states: one JSON object (a
// Markdown code fence around it is allowed), at most [MaxReplyBytes],
// [MaxReplyEntities] entities with non-empty names of at most
// [MaxNameBytes] bytes, [MaxReplyRelations] relations between listed names.
// Each chunk is one context: its entities, related as the reply says.
//
// A chunk whose generation fails or whose reply breaks the schema is
// extracted by Fallback instead, and counted in [Extraction.Fallbacks], as
// are the chunks past [MaxPromptedChunks]; without a Fallback, such a chunk
// fails the extraction with an error naming the chunk and the field.
type Prompted struct {
	Generator provider.Generator
	// Model names the generator's model in shards ("prompted:" + Model,
	// or "prompted" without one).
	Model string
	// System is the extraction prompt; "" means the default text of
	// prompt.GraphExtract (a caller with a tenant passes the tenant's, read
	// through prompt.Lookup).
	System string
	// Fallback extracts the chunks the generator does not (typically [Heuristic]).
	Fallback Extractor
}

// Name implements [Extractor].
func (p Prompted) Name() string {
	if p.Model == "" {
		return "prompted"
	}
	return "prompted:" + p.Model
}

// Extract implements [Extractor].
func (p Prompted) Extract(ctx context.Context, doc Document) (Extraction, error) {
	system := p.System
	if strings.TrimSpace(system) == "" {
		s, err := prompt.SpecOf(prompt.GraphExtract)
		if err != nil {
			return Extraction{}, err
		}
		system = s.Text
	}
	// Each chunk's contexts, or nil when it falls back (errs says why).
	contexts := make([]*Context, len(doc.Chunks))
	errs := make([]error, len(doc.Chunks))
	var g errgroup.Group
	g.SetLimit(promptedConcurrency)
	for ci, c := range doc.Chunks {
		if ci >= MaxPromptedChunks {
			errs[ci] = fmt.Errorf("past the %d chunks a document sends to the generator", MaxPromptedChunks)
			continue
		}
		g.Go(func() error {
			ctxt, err := p.extractChunk(ctx, system, c.Text)
			ctxt.Chunk = ci
			contexts[ci], errs[ci] = &ctxt, err
			return nil
		})
	}
	g.Wait()
	if err := ctx.Err(); err != nil {
		return Extraction{}, err
	}
	var x Extraction
	for ci, c := range contexts {
		if errs[ci] == nil {
			x.Contexts = append(x.Contexts, *c)
			continue
		}
		if p.Fallback == nil {
			return Extraction{}, fmt.Errorf("chunk %d: %w", ci, errs[ci])
		}
		fx, err := p.Fallback.Extract(ctx, Document{ID: doc.ID, Chunks: doc.Chunks[ci : ci+1]})
		if err != nil {
			return Extraction{}, fmt.Errorf("chunk %d: fallback: %w", ci, err)
		}
		for _, fc := range fx.Contexts {
			fc.Chunk = ci
			x.Contexts = append(x.Contexts, fc)
		}
		for short, long := range fx.Aliases {
			if x.Aliases == nil {
				x.Aliases = map[string]string{}
			}
			x.Aliases[short] = long
		}
		x.Fallbacks++
	}
	return x, nil
}

// extractChunk asks the generator for one chunk's entities and relations.
func (p Prompted) extractChunk(ctx context.Context, system, text string) (Context, error) {
	gen, err := p.Generator.Generate(ctx, provider.GenerateRequest{
		Task: provider.TaskAnswer, System: system, MaxTokens: 1024,
		Question:  "Extract the entities and relations of the document.",
		Documents: []string{text},
	})
	if err != nil {
		return Context{}, err
	}
	c, err := parseExtraction(gen.Text)
	if err != nil {
		return Context{}, fmt.Errorf("the model's reply: %w", err)
	}
	return c, nil
}

// reply is the schema of an extraction reply.
type reply struct {
	Entities []struct {
		Name string `json:"name"`
	} `json:"entities"`
	Relations []struct {
		Source string `json:"source"`
		Target string `json:"target"`
	} `json:"relations"`
}

// parseExtraction validates a reply and returns it as one context.
func parseExtraction(text string) (Context, error) {
	if len(text) > MaxReplyBytes {
		return Context{}, fmt.Errorf("%d bytes, the most is %d", len(text), MaxReplyBytes)
	}
	body := unfence(text)
	dec := json.NewDecoder(bytes.NewReader([]byte(body)))
	dec.DisallowUnknownFields()
	var r reply
	if err := dec.Decode(&r); err != nil {
		return Context{}, fmt.Errorf("not the JSON object asked for: %w", err)
	}
	if dec.More() {
		return Context{}, fmt.Errorf("text after the JSON object")
	}
	if len(r.Entities) > MaxReplyEntities {
		return Context{}, fmt.Errorf("entities: %d, the most is %d", len(r.Entities), MaxReplyEntities)
	}
	if len(r.Relations) > MaxReplyRelations {
		return Context{}, fmt.Errorf("relations: %d, the most is %d", len(r.Relations), MaxReplyRelations)
	}
	var c Context
	index := map[string]int{}
	for i, e := range r.Entities {
		name := strings.TrimSpace(e.Name)
		if name == "" || len(name) > MaxNameBytes || !utf8.ValidString(name) {
			return Context{}, fmt.Errorf("entities[%d].name: empty, invalid or longer than %d bytes", i, MaxNameBytes)
		}
		if _, dup := index[name]; !dup {
			index[name] = len(c.Entities)
			c.Entities = append(c.Entities, name)
		}
	}
	for i, rel := range r.Relations {
		a, okA := index[strings.TrimSpace(rel.Source)]
		b, okB := index[strings.TrimSpace(rel.Target)]
		switch {
		case !okA:
			return Context{}, fmt.Errorf("relations[%d].source: %q is not a listed entity", i, rel.Source)
		case !okB:
			return Context{}, fmt.Errorf("relations[%d].target: %q is not a listed entity", i, rel.Target)
		}
		c.Relations = append(c.Relations, [2]int{a, b})
	}
	return c, nil
}

// unfence strips a Markdown code fence around a reply.
func unfence(s string) string {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "```") {
		return s
	}
	s = strings.TrimPrefix(s, "```")
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[i+1:] // the fence's language tag
	}
	return strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "```"))
}

package graph

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard/shared/provider"
)

// ExtractPrompt is the system prompt of [Prompted]: the chunk follows it as
// the one document, and the reply must be the JSON object it describes.
const ExtractPrompt = `You extract a knowledge graph from the document below.
List the named entities and key domain concepts it mentions (people, organisations, places, products, methods, substances, diseases), and the relations the document states between them.
Reply with one JSON object and nothing else:
{"entities":[{"name":"..."}],"relations":[{"source":"...","target":"..."}]}
Write each name as the document writes it. Every relation's source and target must be names listed in entities.
List at most 24 entities and 48 relations.`

// Bounds of a [Prompted] reply: a reply past them is refused.
const (
	MaxReplyBytes     = 64 << 10
	MaxReplyEntities  = 32
	MaxReplyRelations = 64
)

// Prompted is an [Extractor] backed by a generator: each chunk goes to
// Generator with [ExtractPrompt] (as an answer task whose system prompt is
// overridden, so every backend renders it), and the reply is validated
// against the schema the prompt states: one JSON object (a Markdown code
// fence around it is allowed), at most [MaxReplyBytes], [MaxReplyEntities]
// entities with non-empty names of at most [MaxNameBytes] bytes,
// [MaxReplyRelations] relations between listed names. A reply that breaks
// it fails the extraction with an error naming the chunk and the field.
// Each chunk is one context: its entities, related as the reply says.
type Prompted struct {
	Generator provider.Generator
	// Model names the generator's model in shards ("prompted:" + Model).
	Model string
}

// Name implements [Extractor].
func (p Prompted) Name() string { return "prompted:" + p.Model }

// Extract implements [Extractor].
func (p Prompted) Extract(ctx context.Context, doc Document) (Extraction, error) {
	var x Extraction
	for ci, c := range doc.Chunks {
		gen, err := p.Generator.Generate(ctx, provider.GenerateRequest{
			Task: provider.TaskAnswer, System: ExtractPrompt, MaxTokens: 1024,
			Question:  "Extract the entities and relations of the document.",
			Documents: []string{c.Text},
		})
		if err != nil {
			return Extraction{}, fmt.Errorf("chunk %d: %w", ci, err)
		}
		ctxt, err := parseExtraction(gen.Text)
		if err != nil {
			return Extraction{}, fmt.Errorf("chunk %d: the model's reply: %w", ci, err)
		}
		ctxt.Chunk = ci
		x.Contexts = append(x.Contexts, ctxt)
	}
	return x, nil
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

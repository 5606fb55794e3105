package multivector_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/multivector"
)

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func TestHashingTokens(t *testing.T) {
	long := strings.Repeat("protein ", 600)
	tests := []struct {
		name    string
		text    string
		purpose provider.Purpose
		want    int
	}{
		{"a document keeps every token but stop words", "The cells of the immune system respond", provider.ForDocument, 4},
		{"a query also drops the query stop words", "Does the immune system respond", provider.ForQuery, 3},
		{"a document is cut at the document bound", long, provider.ForDocument, multivector.MaxDocumentTokens},
		{"a query is cut at the query bound", long, provider.ForQuery, multivector.MaxQueryTokens},
		{"a text of stop words has no tokens", "the of and", provider.ForDocument, 0},
	}
	e := multivector.NewHashing(0)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := e.EmbedTokens(context.Background(), multivector.Request{Texts: []string{tt.text}, Purpose: tt.purpose})
			if err != nil {
				t.Fatal(err)
			}
			if got := len(out.Tokens[0]); got != tt.want {
				t.Fatalf("got %d tokens, want %d", got, tt.want)
			}
			for j, v := range out.Tokens[0] {
				if len(v) != multivector.DefaultHashingDims || math.Abs(dot(v, v)-1) > 1e-5 {
					t.Fatalf("token %d: %d dims, squared norm %v; want %d unit values", j, len(v), dot(v, v), multivector.DefaultHashingDims)
				}
			}
		})
	}
}

// TestHashingTokenSimilarity pins what MaxSim over the offline vectors
// measures: equal tokens match fully, inflections partly, unrelated words hardly.
func TestHashingTokenSimilarity(t *testing.T) {
	tests := []struct {
		name     string
		a, b     string
		min, max float64
	}{
		{"the same word matches fully", "vaccination", "vaccination", 0.999, 1.001},
		{"an inflection matches partly", "vaccination", "vaccinations", 0.6, 0.999},
		{"unrelated words hardly match", "vaccination", "telescope", -0.3, 0.3},
	}
	e := multivector.NewHashing(256)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := e.EmbedTokens(context.Background(), multivector.Request{Texts: []string{tt.a, tt.b}, Purpose: provider.ForDocument})
			if err != nil {
				t.Fatal(err)
			}
			if got := dot(out.Tokens[0][0], out.Tokens[1][0]); got < tt.min || got > tt.max {
				t.Errorf("similarity %v, want in [%v, %v]", got, tt.min, tt.max)
			}
		})
	}
}

func TestHashingRefusesACallPastTheBatchBound(t *testing.T) {
	texts := make([]string, multivector.MaxBatchTokens/multivector.MaxDocumentTokens+1)
	for i := range texts {
		texts[i] = strings.Repeat("word ", multivector.MaxDocumentTokens)
	}
	_, err := multivector.NewHashing(8).EmbedTokens(context.Background(), multivector.Request{Texts: texts, Purpose: provider.ForDocument})
	if err == nil || !strings.Contains(err.Error(), "offline: embed tokens") {
		t.Fatalf("err = %v, want a refusal naming offline", err)
	}
}

func TestHashingNamesItsModel(t *testing.T) {
	e := multivector.NewHashing(64)
	out, err := e.EmbedTokens(context.Background(), multivector.Request{Texts: []string{"hello"}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Provider != "offline" || out.Model != "hashing-v1-tokens" || out.Dims != 64 || e.Dims() != 64 || e.Model() != out.Model {
		t.Errorf("got %s/%s %d dims, want offline/hashing-v1-tokens 64", out.Provider, out.Model, out.Dims)
	}
}

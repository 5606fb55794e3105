package offline

import (
	"context"
	"math"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/switchboard-dev/switchboard/shared/provider"
)

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func embed(t *testing.T, e provider.Embedder, texts ...string) [][]float32 {
	t.Helper()
	out, err := e.Embed(context.Background(), provider.EmbedRequest{Texts: texts, Purpose: provider.ForDocument})
	if err != nil {
		t.Fatal(err)
	}
	return out.Vectors
}

func TestEmbedderNamesItselfAndItsDimensions(t *testing.T) {
	for _, tt := range []struct{ dims, want int }{{0, DefaultDims}, {-3, DefaultDims}, {64, 64}, {1536, 1536}} {
		e := NewEmbedder(tt.dims)
		out, err := e.Embed(context.Background(), provider.EmbedRequest{Texts: []string{"hello world"}})
		if err != nil {
			t.Fatal(err)
		}
		got := []any{e.Provider(), e.Model(), e.Dims(), out.Provider, out.Model, out.Dims, len(out.Vectors[0])}
		want := []any{"offline", "hashing-v1", tt.want, "offline", "hashing-v1", tt.want, tt.want}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("NewEmbedder(%d) mismatch (-want +got):\n%s", tt.dims, diff)
		}
	}
}

func TestEmbedderGivesDeterministicUnitVectors(t *testing.T) {
	e := NewEmbedder(DefaultDims)
	texts := []string{"Interleukin-6 levels in sepsis", "x", "数据库 naïve café"}
	a, b := embed(t, e, texts...), embed(t, NewEmbedder(DefaultDims), texts...)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("two embedders disagree (-first +second):\n%s", diff)
	}
	for i, v := range a {
		if n := math.Sqrt(dot(v, v)); math.Abs(n-1) > 1e-5 {
			t.Errorf("text %q: norm %v, want 1", texts[i], n)
		}
	}
}

func TestEmbedderGivesTheZeroVectorForTextWithoutTerms(t *testing.T) {
	for _, s := range []string{"", "  ,. ", "the of and"} {
		v := embed(t, NewEmbedder(16), s)[0]
		if diff := cmp.Diff(make([]float32, 16), v); diff != "" {
			t.Errorf("%q: mismatch (-want +got):\n%s", s, diff)
		}
	}
}

func TestEmbedderPlacesRelatedTextsCloser(t *testing.T) {
	v := embed(t, NewEmbedder(DefaultDims),
		"Vitamin D supplementation reduces fracture risk in elderly women.",
		"Supplementing vitamin D lowered the risk of fractures among older women.",
		"Quantum entanglement between photons was observed over long distances.")
	if near, far := dot(v[0], v[1]), dot(v[0], v[2]); near <= far+0.2 {
		t.Errorf("paraphrase similarity %.3f not clearly above unrelated %.3f", near, far)
	}
}

func TestEmbedderIsSafeForConcurrentUse(t *testing.T) {
	e := NewEmbedder(DefaultDims)
	want := embed(t, e, "concurrent embedding of the same text")[0]
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			got := embed(t, e, "concurrent embedding of the same text")[0]
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("concurrent result differs:\n%s", diff)
			}
		})
	}
	wg.Wait()
}

func TestEmbedderStopsWhenTheContextIsDone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewEmbedder(8).Embed(ctx, provider.EmbedRequest{Texts: []string{"a"}}); err == nil {
		t.Error("no error from a cancelled context")
	}
}

func BenchmarkEmbed(b *testing.B) {
	e := NewEmbedder(DefaultDims)
	text := "Alterations of the architecture of cerebral white matter in the developing human brain can affect cortical development and result in functional disabilities. A line scan diffusion-weighted magnetic resonance imaging sequence with diffusion tensor analysis was applied."
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		e.Embed(context.Background(), provider.EmbedRequest{Texts: []string{text}})
	}
}

package offline

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
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

// TestEmbedderVectorsNeverChange pins hashing-v1's vectors bit for bit: a
// store's vectors and its queries' must come from the same scheme, so a change
// to the embedder that moves any bit needs a new [EmbedderModel].
func TestEmbedderVectorsNeverChange(t *testing.T) {
	texts := []string{"", "x", "Interleukin-6 (IL-6) levels rise in sepsis; TNF-α too.", "数据库 naïve café Straße",
		"the the the cell cell cells of the cell", strings.Repeat("growth factor receptor signalling ", 40)}
	rng := rand.New(rand.NewPCG(11, 12))
	words := strings.Fields("protein Cancer gene mouse brain immune virus drug trial dose risk blood heart liver tumor " +
		"signal growth factor receptor IL6 covid19 β-cell don't U.S.A. 3.5 1,000 well-being naïve")
	for range 50 {
		var b strings.Builder
		for range 5 + rng.IntN(300) {
			b.WriteString(words[rng.IntN(len(words))] + " ")
		}
		texts = append(texts, b.String())
	}
	sum := sha256.New()
	for _, dims := range []int{16, DefaultDims} {
		for _, v := range embed(t, NewEmbedder(dims), texts...) {
			for _, x := range v {
				binary.Write(sum, binary.LittleEndian, math.Float32bits(x))
			}
		}
	}
	if got, want := hex.EncodeToString(sum.Sum(nil)), "1a1404880c795cf16662029bc609a2374ef850d32072be3f5888095856378d80"; got != want {
		t.Errorf("vectors changed: SHA-256 %s, want %s", got, want)
	}
}

func TestFeatureSortOrdersAsAComparisonSortDoes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	tests := []struct {
		name string
		n    int
		gen  func() uint64
	}{
		{"a few features", 10, rng.Uint64},
		{"uniform hashes", 3000, rng.Uint64},
		{"three features repeated", 5000, func() uint64 { return []uint64{7, 1 << 63, 42}[rng.IntN(3)] }},
		{"every feature in one bucket", 300_000, func() uint64 { return rng.Uint64N(1 << 20) }}, // quadratic, it would take minutes
	}
	var b buffers
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			feats := make([]uint64, tt.n)
			for i := range feats {
				feats[i] = tt.gen()
			}
			want := slices.Sorted(slices.Values(feats))
			b.sort(feats)
			if diff := cmp.Diff(want, feats); diff != "" {
				t.Errorf("mismatch (-slices.Sort +sort):\n%s", diff)
			}
		})
	}
}

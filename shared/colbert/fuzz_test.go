package colbert_test

import (
	"context"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/colbert"
)

// FuzzDecodeShard feeds arbitrary bytes to the shard parser: it must not
// panic, and what it returns must be bounded by its input: token data no
// larger, at most one chunk per 3 bytes. A shard it accepts encodes back to
// the same bytes.
func FuzzDecodeShard(f *testing.F) {
	vecs := [][]float32{{1, 0, 0, 0, 0, 0, 0, 0}, {0, 1, 0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0, 0.6, 0.8}}
	codec, err := colbert.Train(context.Background(), vecs, &colbert.TrainOptions{Centroids: 2, Seed: 1})
	if err != nil {
		f.Fatal(err)
	}
	comp, _ := codec.Compress(vecs)
	seed, _ := codec.EncodeShard(colbert.Shard{IDs: []string{"a", "bc"}, Tokens: []colbert.Tokens{comp, {}}})
	f.Add(seed)
	f.Add(seed[:20])
	f.Add([]byte("SBTV"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := codec.DecodeShard(b)
		if err != nil {
			return
		}
		data := 0
		for i, tk := range s.Tokens {
			data += len(s.IDs[i]) + 2*tk.Len() + len(tk.Residuals)
		}
		if data > len(b) || 3*len(s.IDs) > len(b) {
			t.Fatalf("%d input bytes gave %d chunks, %d bytes of data", len(b), len(s.IDs), data)
		}
		back, err := codec.EncodeShard(s)
		if err != nil || string(back) != string(b) {
			t.Fatalf("an accepted shard does not encode back to its bytes (err %v)", err)
		}
	})
}

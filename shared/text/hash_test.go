package text

import "testing"

func TestHash64(t *testing.T) {
	// Known answers from the FNV reference test vectors
	// (http://www.isthe.com/chongo/src/fnv/test_fnv.c, FNV-1a 64).
	tests := []struct {
		name string
		in   string
		want uint64
		hex  string
	}{
		{"the empty string hashes to the offset basis", "", 0xcbf29ce484222325, "cbf29ce484222325"},
		{"one letter", "a", 0xaf63dc4c8601ec8c, "af63dc4c8601ec8c"},
		{"a word", "foobar", 0x85944171f73967e8, "85944171f73967e8"},
		{"a hash below 2^56 is padded with zeros", "doc-9300", 0x00ad4166095b5670, "00ad4166095b5670"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Hash64(tt.in); got != tt.want {
				t.Errorf("Hash64(%q) = %#x, want %#x", tt.in, got, tt.want)
			}
			if got := Hash64Hex(tt.in); got != tt.hex {
				t.Errorf("Hash64Hex(%q) = %q, want %q", tt.in, got, tt.hex)
			}
		})
	}
}

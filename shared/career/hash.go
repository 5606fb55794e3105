package career

import (
	"fmt"
	"hash/fnv"
)

// hash64Hex is the stable 64-bit hash of s (FNV-1a), as 16 lowercase hex
// digits: the seed's stable_hash64_hex, and text.Hash64Hex's contract.
func hash64Hex(s string) string {
	h := fnv.New64a()
	h.Write([]byte(s))
	return fmt.Sprintf("%016x", h.Sum64())
}

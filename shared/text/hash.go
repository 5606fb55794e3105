package text

import (
	"hash/fnv"
	"strconv"
)

// Hash64 returns the 64-bit FNV-1a hash of s's bytes: a stable fingerprint for
// deduplicating documents and naming chunks, not a cryptographic hash.
func Hash64(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s)) // never fails
	return h.Sum64()
}

// Hash64Hex returns [Hash64] of s as 16 lowercase hexadecimal digits, zero-padded.
func Hash64Hex(s string) string {
	const zeros = "0000000000000000"
	x := strconv.FormatUint(Hash64(s), 16)
	return zeros[len(x):] + x
}

package career

import "github.com/switchboard-dev/switchboard/shared/text"

// hash64Hex is the seed's stable_hash64_hex: [text.Hash64Hex].
func hash64Hex(s string) string { return text.Hash64Hex(s) }

package memory

import (
	"fmt"
	"testing"
)

func TestMessageSortKeysAreTwelveZeroPaddedDigits(t *testing.T) {
	for _, seq := range []int64{-12, -1, 0, 1, 9, 10, 99, 100, 123_456, 99_999_999_999, 100_000_000_000, maxSeq, maxSeq + 1, 1 << 62} {
		if got, want := msgSK(seq), fmt.Sprintf("%s%012d", msgPrefix, seq); got != want {
			t.Errorf("msgSK(%d) = %q, want %q", seq, got, want)
		}
	}
}

package embedded

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/store"
)

func TestRecordsRoundTripAndCorruptOnesFailCleanly(t *testing.T) {
	it := store.Item{PK: "p", SK: "s", ExpiresAt: time.Unix(0, 0), Attrs: store.Attrs{
		"s": "héllo", "e": "", "n": int64(-1 << 40), "b": []byte{0, 255}, "z": []byte{}, "t": true, "f": false,
	}}
	v, err := encode(it)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decode(key("p", "s"), v)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(it, got); diff != "" {
		t.Errorf("round trip mismatch (-want +got):\n%s", diff)
	}
	if live(v, time.Now()) {
		t.Error("an item that expired at the epoch reads as live")
	}
	for n := 0; n < len(v); n++ {
		if _, err := decode(key("p", "s"), v[:n]); err == nil {
			t.Errorf("a record cut to %d of %d bytes decoded without error", n, len(v))
		}
	}
	if _, err := decode(key("p", "s"), append(v, 0)); err == nil {
		t.Error("a record with trailing bytes decoded without error")
	}
}

func FuzzDecodeNeverPanics(f *testing.F) {
	v, _ := encode(store.Item{Attrs: store.Attrs{"a": "b", "n": int64(3)}})
	f.Add(v)
	f.Fuzz(func(t *testing.T, v []byte) {
		decode(key("p", "s"), v)
		live(v, time.Now())
	})
}

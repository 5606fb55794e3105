package embedded

import (
	"testing"
	"time"
	"unsafe"

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
	got, err := decode(key("p", "s"), v, "p")
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
		if _, err := decode(key("p", "s"), v[:n], "p"); err == nil {
			t.Errorf("a record cut to %d of %d bytes decoded without error", n, len(v))
		}
	}
	if _, err := decode(key("p", "s"), append(v, 0), "p"); err == nil {
		t.Error("a record with trailing bytes decoded without error")
	}
}

func FuzzDecodeNeverPanics(f *testing.F) {
	v, _ := encode(store.Item{Attrs: store.Attrs{"a": "b", "n": int64(3)}})
	f.Add(v)
	f.Fuzz(func(t *testing.T, v []byte) {
		decode(key("p", "s"), v, "p")
		live(v, time.Now())
	})
}

func TestDecodedItemsShareTheirAttributeNamesAndPartition(t *testing.T) {
	v, err := encode(store.Item{Attrs: store.Attrs{"role": "user"}})
	if err != nil {
		t.Fatal(err)
	}
	pk := "t#acme#conv#1"
	a, _ := decode(key(pk, "msg#1"), v, pk)
	b, _ := decode(key(pk, "msg#2"), v, pk)
	other, _ := decode(key("t#acme#conv#2", "msg#1"), v, pk)
	if other.PK != "t#acme#conv#2" {
		t.Errorf("an item of another partition decoded with partition %q", other.PK)
	}
	if unsafe.StringData(a.PK) != unsafe.StringData(pk) || unsafe.StringData(b.PK) != unsafe.StringData(pk) {
		t.Error("items of the partition asked for do not share its key")
	}
	for k := range a.Attrs {
		for k2 := range b.Attrs {
			if unsafe.StringData(k) != unsafe.StringData(k2) {
				t.Errorf("two items have their own copy of the attribute name %q", k)
			}
		}
	}
}

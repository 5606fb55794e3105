package embedded

import (
	"bytes"
	"hash/maphash"
	"maps"
	"math/bits"
	"sync/atomic"

	"github.com/switchboard-dev/switchboard/shared/store"
)

// The items read most are read again unchanged, many times: a conversation's
// summary and newest messages, every chat turn. A table keeps the items it
// decoded, by their record (key and value), so that reading one again costs
// a hash and a comparison instead of building its attributes anew. A changed
// item has another record, so what is kept is never stale; it is only
// replaced, by another item that hashes to its slot.

const (
	// decodedSlots is how many decoded items a table keeps.
	decodedSlots = 1024
	// maxDecodedRecord is the longest record (key and value) kept: at most
	// about 8 MiB kept in all, records and decoded strings.
	maxDecodedRecord = 4 << 10
)

// decodedItems keep decoded items, one in each slot.
type decodedItems struct {
	seed  maphash.Seed
	slots [decodedSlots]atomic.Pointer[decodedItem]
}

// decodedItem is an item as decode returned it for its record. Its
// attributes are never handed out, only copies of them, which callers may
// change.
type decodedItem struct {
	k, v []byte
	it   store.Item
}

func newDecodedItems() *decodedItems { return &decodedItems{seed: maphash.MakeSeed()} }

// decode is [decode], keeping what it decodes. With shared, for a caller
// that only reads them (store.Query.ReadOnly), the attributes it returns
// may be those it keeps, not copies.
func (d *decodedItems) decode(k, v []byte, pk string, shared bool) (store.Item, error) {
	if len(k)+len(v) > maxDecodedRecord {
		return decode(k, v, pk)
	}
	slot := &d.slots[(maphash.Bytes(d.seed, v)^bits.RotateLeft64(maphash.Bytes(d.seed, k), 1))%decodedSlots]
	if e := slot.Load(); e != nil && bytes.Equal(e.v, v) && bytes.Equal(e.k, k) {
		it := e.it
		if !shared {
			it.Attrs = maps.Clone(e.it.Attrs)
		}
		return it, nil
	}
	it, err := decode(k, v, pk)
	if err != nil || !keepable(it) {
		return it, err
	}
	kept := it
	if !shared {
		kept.Attrs = maps.Clone(it.Attrs)
	}
	slot.Store(&decodedItem{k: bytes.Clone(k), v: bytes.Clone(v), it: kept})
	return it, nil
}

// keepable reports whether copies of it's attributes are as good as new:
// every value immutable (not bytes, which a caller could change).
func keepable(it store.Item) bool {
	for _, v := range it.Attrs {
		if _, ok := v.([]byte); ok {
			return false
		}
	}
	return true
}

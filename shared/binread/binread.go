// Package binread reads the bounded binary formats Switchboard stores
// (retrieval's segments, graph's shards): uvarints and length-prefixed
// strings, each count checked against the bytes left before anything is
// allocated for it, the first error kept and every later read a no-op, so a
// decoder reads on and checks once.
//
//	r := binread.New(body, "graph: decode shard", graph.ErrCorrupt)
//	id := r.String("doc id")
//	items := make([]item, r.Count("item count", 4)) // at most len(rest)/4
//	if r.Err() != nil { ... }
package binread

import (
	"encoding/binary"
	"fmt"
)

// Reader decodes a byte slice front to back, remembering the first error.
// It never panics and keeps no reference to the data once dropped.
type Reader struct {
	b        []byte
	op       string
	sentinel error
	err      error
}

// New returns a Reader of b whose errors read "op: sentinel: what went
// wrong" and wrap sentinel.
func New(b []byte, op string, sentinel error) *Reader {
	return &Reader{b: b, op: op, sentinel: sentinel}
}

// Err returns the first error, nil if every read so far succeeded.
func (r *Reader) Err() error { return r.err }

// Fail records an error unless one is already recorded.
func (r *Reader) Fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%s: %w: %s", r.op, r.sentinel, fmt.Sprintf(format, args...))
	}
}

// Rest returns the bytes not read yet.
func (r *Reader) Rest() []byte { return r.b }

// Skip marks the next n bytes read; n must be at most len(Rest()).
func (r *Reader) Skip(n int) { r.b = r.b[n:] }

// Uvarint reads an unsigned varint (0 after an error).
func (r *Reader) Uvarint(what string) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.Fail("bad %s", what)
		return 0
	}
	r.b = r.b[n:]
	return v
}

// Int reads a uvarint that must be at most limit.
func (r *Reader) Int(what string, limit int) int {
	v := r.Uvarint(what)
	if r.err == nil && v > uint64(limit) {
		r.Fail("%s %d exceeds %d", what, v, limit)
		return 0
	}
	return int(v)
}

// Count reads a uvarint that counts items of at least minBytes bytes each,
// so a corrupt count cannot make the decoder allocate more than the input
// holds.
func (r *Reader) Count(what string, minBytes int) int {
	v := r.Uvarint(what)
	if r.err == nil && v > uint64(len(r.b)/minBytes) { // len(r.b) after the count itself
		r.Fail("%s %d exceeds the data", what, v)
		return 0
	}
	return int(v)
}

// String reads a uvarint length and that many bytes.
func (r *Reader) String(what string) string {
	n := r.Count(what+" length", 1)
	if r.err != nil {
		return ""
	}
	v := string(r.b[:n])
	r.b = r.b[n:]
	return v
}

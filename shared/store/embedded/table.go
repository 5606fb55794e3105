// Package embedded is the [store.Table] backend for a laptop: one bbolt file,
// no server. It has DynamoDB's semantics (conditions, transactions, queries
// by sort key, TTL honoured on read) so code that runs here runs on AWS.
//
// bbolt lets one process open a file at a time; a second process waits up to
// [Options.LockTimeout] and then fails with a message saying so.
//
// Writes are committed in groups: bbolt syncs the file at each commit, and a
// writer that arrives while another commits waits for it and then commits
// with every writer that arrived meanwhile, in one transaction and one sync,
// each in its turn as if alone (its conditions see the writes before it).
// A lone writer never waits.
package embedded

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/switchboard-dev/switchboard/shared/store"
)

var _ store.Table = (*Table)(nil)

var itemsBucket = []byte("items")

// Options configures [Open]. A nil *Options uses the defaults.
type Options struct {
	// LockTimeout is how long Open waits for another process to release the
	// file. If zero, defaults to 2 seconds.
	LockTimeout time.Duration
	// Now returns the current time, for TTL. If nil, defaults to time.Now.
	Now func() time.Time
}

// Table is a [store.Table] in a bbolt file.
type Table struct {
	db      *bolt.DB
	now     func() time.Time
	group   group
	decoded *decodedItems
}

// group is the writers of the commit under way and of the next: while busy,
// writers queue; the commit that ends hands the queue to its first writer,
// which commits it whole.
type group struct {
	mu    sync.Mutex
	busy  bool
	queue []*write
}

// write is one writer's transaction: fn checks all its conditions before it
// writes anything, so one that fails on a condition leaves the transaction
// as it found it, and the others in its group commit.
type write struct {
	fn   func(*bolt.Tx) error
	done chan error
}

// errLead tells a queued writer that it commits the queue.
var errLead = errors.New("embedded: lead the next commit")

// commit runs fn in a write transaction, grouped with the writers that
// queue meanwhile, and returns fn's error or the commit's.
func (t *Table) commit(fn func(*bolt.Tx) error) error {
	w := &write{fn: fn, done: make(chan error, 1)}
	g := &t.group
	g.mu.Lock()
	g.queue = append(g.queue, w)
	lead := !g.busy
	g.busy = true
	g.mu.Unlock()
	if !lead {
		if err := <-w.done; err != errLead {
			return err
		}
	}
	g.mu.Lock()
	batch := g.queue
	g.queue = nil
	g.mu.Unlock()
	t.run(batch)
	g.mu.Lock()
	if len(g.queue) > 0 {
		g.queue[0].done <- errLead
	} else {
		g.busy = false
	}
	g.mu.Unlock()
	return <-w.done
}

// run commits batch in one transaction, telling each writer its outcome. A
// writer failing otherwise than on a condition may have written half of its
// writes, so the transaction is rolled back and each writer runs alone.
func (t *Table) run(batch []*write) {
	if len(batch) == 1 {
		batch[0].done <- t.db.Update(batch[0].fn)
		return
	}
	errs := make([]error, len(batch))
	err := t.db.Update(func(tx *bolt.Tx) error {
		for i, w := range batch {
			if errs[i] = w.fn(tx); errs[i] != nil && !errors.Is(errs[i], store.ErrConditionFailed) {
				return errs[i]
			}
		}
		return nil
	})
	for i, w := range batch {
		if err != nil {
			w.done <- t.db.Update(w.fn)
		} else {
			w.done <- errs[i]
		}
	}
}

// Open opens or creates the table file at path.
func Open(path string, opts *Options) (*Table, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.LockTimeout == 0 {
		o.LockTimeout = 2 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: o.LockTimeout})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("embedded: open %s: another process holds it (is a second switchboard running on the same --data folder?)", path)
	}
	if err != nil {
		return nil, fmt.Errorf("embedded: open %s: %w", path, err)
	}
	// A file that has the bucket needs no write: a write transaction syncs
	// the file twice, which every cold start of a function would pay.
	var exists bool
	db.View(func(tx *bolt.Tx) error {
		exists = tx.Bucket(itemsBucket) != nil
		return nil
	})
	if !exists {
		if err := db.Update(func(tx *bolt.Tx) error {
			_, err := tx.CreateBucketIfNotExists(itemsBucket)
			return err
		}); err != nil {
			db.Close()
			return nil, fmt.Errorf("embedded: init %s: %w", path, err)
		}
	}
	return &Table{db: db, now: o.Now, decoded: newDecodedItems()}, nil
}

// Close closes the file. The Table is unusable afterwards.
func (t *Table) Close() error { return t.db.Close() }

// Get implements [store.Table].
func (t *Table) Get(ctx context.Context, pk, sk string) (store.Item, error) {
	if err := store.ValidateKey(pk, sk); err != nil {
		return store.Item{}, err
	}
	var it *store.Item
	err := t.db.View(func(tx *bolt.Tx) error {
		var err error
		it, err = t.load(tx.Bucket(itemsBucket), pk, sk)
		return err
	})
	if err != nil {
		return store.Item{}, err
	}
	if it == nil || it.Expired(t.now()) {
		return store.Item{}, fmt.Errorf("embedded: get %s/%s: %w", pk, sk, store.ErrNotFound)
	}
	return *it, nil
}

// Put implements [store.Table].
func (t *Table) Put(ctx context.Context, it store.Item, c store.Condition) error {
	return t.Transact(ctx, store.Put(it, c))
}

// Delete implements [store.Table].
func (t *Table) Delete(ctx context.Context, pk, sk string, c store.Condition) error {
	return t.Transact(ctx, store.Delete(pk, sk, c))
}

// Transact implements [store.Table]. bbolt serialises writers, so checking
// every condition and then writing inside one update is atomic.
func (t *Table) Transact(ctx context.Context, writes ...store.Write) error {
	writes, err := store.ValidateTransaction(writes)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	now := t.now()
	return t.commit(func(tx *bolt.Tx) error {
		b := tx.Bucket(itemsBucket)
		for i, w := range writes {
			cur, err := t.load(b, w.Item.PK, w.Item.SK)
			if err != nil {
				return err
			}
			if !w.If.Holds(cur, now) {
				return fmt.Errorf("embedded: write %d (%s/%s %v): %w", i, w.Item.PK, w.Item.SK, w.If, store.ErrConditionFailed)
			}
		}
		for _, w := range writes {
			k := key(w.Item.PK, w.Item.SK)
			switch w.Kind {
			case store.WritePut:
				v, err := encode(w.Item)
				if err != nil {
					return err
				}
				if err := b.Put(k, v); err != nil {
					return fmt.Errorf("embedded: put: %w", err)
				}
			case store.WriteDelete:
				if err := b.Delete(k); err != nil {
					return fmt.Errorf("embedded: delete: %w", err)
				}
			}
		}
		return nil
	})
}

// Query implements [store.Table].
func (t *Table) Query(ctx context.Context, pk string, q store.Query) (store.Page, error) {
	q, err := store.ValidateQuery(pk, q)
	if err != nil {
		return store.Page{}, err
	}
	after, err := store.DecodeCursor(q)
	if err != nil {
		return store.Page{}, err
	}
	// lo and hi bound the bbolt keys of the selected sort keys: lo inclusive, hi exclusive.
	// The keys are built in buffers on the stack (most fit).
	var loBuf, hiBuf [keyBuffer]byte
	var lo, hi []byte
	switch {
	case q.Prefix != "":
		lo = appendKey(loBuf[:0], pk, q.Prefix)
		hi = successor(append(hiBuf[:0], lo...))
	default:
		lo = appendKey(loBuf[:0], pk, q.From)
		if q.To != "" {
			hi = append(appendKey(hiBuf[:0], pk, q.To), 0) // the smallest key after To
		} else {
			hi = successor(appendKey(hiBuf[:0], pk, ""))
		}
	}
	if after != "" {
		if q.Reverse {
			hi = appendKey(hiBuf[:0], pk, after)
		} else {
			lo = append(appendKey(loBuf[:0], pk, after), 0)
		}
	}
	now := t.now()
	var page store.Page
	err = t.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(itemsBucket).Cursor()
		var k, v []byte
		if q.Reverse {
			k, _ = c.Seek(hi)
			if k == nil {
				k, v = c.Last()
			} else {
				k, v = c.Prev()
			}
		} else {
			k, v = c.Seek(lo)
		}
		for ; k != nil; k, v = step(c, q.Reverse) {
			if bytes.Compare(k, lo) < 0 || bytes.Compare(k, hi) >= 0 {
				break
			}
			if len(page.Items) == q.Limit {
				if live(v, now) { // a live item beyond the page: there is more
					page.Next = store.EncodeCursor(page.Items[len(page.Items)-1].SK)
					break
				}
				continue
			}
			it, err := t.decoded.decode(k, v, pk, q.ReadOnly)
			if err != nil {
				return err
			}
			if !it.Expired(now) {
				if page.Items == nil {
					page.Items = make([]store.Item, 0, min(q.Limit, 16)) // not grown item by item
				}
				page.Items = append(page.Items, it)
			}
		}
		return nil
	})
	return page, err
}

func step(c *bolt.Cursor, reverse bool) ([]byte, []byte) {
	if reverse {
		return c.Prev()
	}
	return c.Next()
}

func (t *Table) load(b *bolt.Bucket, pk, sk string) (*store.Item, error) {
	var buf [keyBuffer]byte
	k := appendKey(buf[:0], pk, sk)
	v := b.Get(k)
	if v == nil {
		return nil, nil
	}
	it, err := t.decoded.decode(k, v, pk, false)
	if err != nil {
		return nil, err
	}
	return &it, nil
}

// key joins pk and sk with a NUL, which keys may not contain, so that the
// bbolt order is (pk, sk) order and a partition is one contiguous range.
func key(pk, sk string) []byte {
	return appendKey(make([]byte, 0, len(pk)+1+len(sk)), pk, sk)
}

// appendKey appends key(pk, sk) to dst.
func appendKey(dst []byte, pk, sk string) []byte {
	dst = append(dst, pk...)
	dst = append(dst, 0)
	return append(dst, sk...)
}

// keyBuffer is the size of the buffers on the stack that reads build keys
// in: a key longer than that goes to the heap.
const keyBuffer = 128

// successor returns the smallest key greater than every key with prefix p,
// in p's own bytes.
func successor(p []byte) []byte {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] < 0xff {
			p[i]++
			return p[:i+1]
		}
	}
	return nil // unreachable: keys always contain a NUL separator
}

// An item is stored as a compact binary record, each value tagged with its
// type (as a DynamoDB attribute value is), so a round trip never turns an
// int64 into a float:
//
//	version (1) | flags (1: bit 0 = has expiry) | [expiry varint] | count uvarint |
//	count × (name: uvarint length + bytes, tag (1), value)
//
// where a value is a uvarint length + bytes for strings and binary, a varint
// for numbers, one byte for booleans.
const recordVersion = 1

const (
	tagString = 's'
	tagNumber = 'n'
	tagBinary = 'b'
	tagBool   = 't'
)

func encode(it store.Item) ([]byte, error) {
	b := make([]byte, 0, 64)
	b = append(b, recordVersion)
	if it.ExpiresAt.IsZero() {
		b = append(b, 0)
	} else {
		b = append(b, 1)
		b = binary.AppendVarint(b, it.ExpiresAt.Unix())
	}
	b = binary.AppendUvarint(b, uint64(len(it.Attrs)))
	for name, v := range it.Attrs {
		b = appendBytes(b, name)
		switch v := v.(type) {
		case string:
			b = appendBytes(append(b, tagString), v)
		case int64:
			b = binary.AppendVarint(append(b, tagNumber), v)
		case []byte:
			b = appendBytes(append(b, tagBinary), string(v))
		case bool:
			t := byte(0)
			if v {
				t = 1
			}
			b = append(b, tagBool, t)
		default:
			return nil, fmt.Errorf("embedded: attribute %q has unsupported type %T", name, v)
		}
	}
	return b, nil
}

func appendBytes(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// errCorrupt reports a record this backend did not write.
var errCorrupt = errors.New("corrupt record")

// reader consumes a record, remembering the first error.
type reader struct {
	b   []byte
	err error
}

func (r *reader) byte() byte {
	if r.err != nil || len(r.b) == 0 {
		r.err = errCorrupt
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if r.err != nil || n <= 0 {
		r.err = errCorrupt
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	v, n := binary.Varint(r.b)
	if r.err != nil || n <= 0 {
		r.err = errCorrupt
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) bytes() []byte {
	n := r.uvarint()
	if r.err != nil || uint64(len(r.b)) < n {
		r.err = errCorrupt
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

// live reports whether the record v has not expired at now, reading only its header.
func live(v []byte, now time.Time) bool {
	r := &reader{b: v}
	r.byte()
	if r.byte()&1 == 0 {
		return true
	}
	return !(store.Item{ExpiresAt: time.Unix(r.varint(), 0)}).Expired(now)
}

// decode decodes the item at key k, whose partition key is likely pk (the
// one a Get or Query asked for), shared rather than allocated again. An
// item with string values has them and its sort key as parts of one string
// holding the sort key and v, made once.
func decode(k, v []byte, pk string) (store.Item, error) {
	i := bytes.IndexByte(k, 0)
	sk := k[i+1:]
	it := store.Item{PK: pk}
	if string(k[:i]) != pk {
		it.PK = string(k[:i])
	}
	fail := func(err error) (store.Item, error) {
		it.SK = string(sk)
		return it, fmt.Errorf("embedded: decode %s/%s: %w", it.PK, it.SK, err)
	}
	r := &reader{b: v}
	if r.byte() != recordVersion {
		return fail(errors.New("unknown record version"))
	}
	if r.byte()&1 != 0 {
		it.ExpiresAt = time.Unix(r.varint(), 0)
	}
	n := r.uvarint()
	if r.err == nil && n > uint64(len(r.b)) { // every attribute takes at least a byte
		r.err = errCorrupt
	}
	if r.err != nil {
		return fail(r.err)
	}
	it.Attrs = make(store.Attrs, n)
	var text string // the sort key and v, once the item has a string value
	for j := uint64(0); j < n && r.err == nil; j++ {
		name := attrName(r.bytes())
		switch r.byte() {
		case tagString:
			b := r.bytes()
			if text == "" {
				var sb strings.Builder
				sb.Grow(len(sk) + len(v))
				sb.Write(sk)
				sb.Write(v)
				text = sb.String()
			}
			end := len(sk) + len(v) - len(r.b)
			it.Attrs[name] = text[end-len(b) : end]
		case tagNumber:
			it.Attrs[name] = r.varint()
		case tagBinary:
			it.Attrs[name] = append([]byte{}, r.bytes()...)
		case tagBool:
			it.Attrs[name] = r.byte() == 1
		default:
			r.err = errCorrupt
		}
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = errCorrupt
	}
	if r.err != nil {
		return fail(r.err)
	}
	if text != "" {
		it.SK = text[:len(sk)]
	} else {
		it.SK = string(sk)
	}
	return it, nil
}

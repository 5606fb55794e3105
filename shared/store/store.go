// Package store defines the two storage interfaces Switchboard's domain
// packages are written against: [Table], shaped after DynamoDB, and [Blobs],
// shaped after S3. Each has an embedded backend for laptops and tests
// (packages embedded and localfs) and an AWS backend (packages dynamo and s3);
// all of them pass the behaviour suite in package storetest.
//
// A domain package takes a Table and writes items under keys that begin with
// the caller's tenant:
//
//	pk := "t#" + tenant + "#conv#" + id
//	err := table.Transact(ctx,
//		store.Put(store.Item{PK: pk, SK: "meta", Attrs: store.Attrs{"seq": next}}, store.IfEquals("seq", prev)),
//		store.Put(store.Item{PK: pk, SK: msgKey(next), Attrs: msg}, store.IfAbsent()),
//	)
//	if errors.Is(err, store.ErrConditionFailed) || errors.Is(err, store.ErrConflict) {
//		// someone else won the race: read again and retry
//	}
package store

import (
	"errors"
	"fmt"
	"time"
	"unicode/utf8"
)

// Errors shared by every backend. Backends map their own failures onto these
// (an empty DynamoDB GetItem, S3 NoSuchKey) so callers can branch with [errors.Is].
var (
	// ErrNotFound reports that an item or blob does not exist or has expired.
	ErrNotFound = errors.New("not found")
	// ErrConditionFailed reports that a write's condition did not hold; nothing was written.
	ErrConditionFailed = errors.New("condition failed")
	// ErrConflict reports that a transaction collided with another one in
	// flight; nothing was written and the caller may retry.
	ErrConflict = errors.New("transaction conflict")
	// ErrInvalid reports a request no backend would accept: an empty key, an
	// unsupported attribute type, a transaction naming one item twice.
	ErrInvalid = errors.New("invalid request")
)

// Limits every backend enforces, taken from DynamoDB's so that code that runs
// on the embedded backend also runs on AWS.
const (
	// MaxPKBytes and MaxSKBytes bound the partition and sort keys.
	MaxPKBytes = 2048
	MaxSKBytes = 1024
	// MaxTransactWrites bounds the writes in one [Table.Transact].
	MaxTransactWrites = 100
	// MaxItemBytes bounds one item, counted as DynamoDB counts it: the
	// lengths of attribute names and values, keys included.
	MaxItemBytes = 400 * 1024
	// MaxTransactBytes bounds the items of one [Table.Transact].
	MaxTransactBytes = 4 << 20
	// DefaultQueryLimit is the page size when [Query.Limit] is zero.
	DefaultQueryLimit = 100
	// MaxQueryLimit is the largest page a query returns.
	MaxQueryLimit = 1000
)

// Attribute names the backends reserve for the key and the TTL.
const (
	AttrPK        = "pk"
	AttrSK        = "sk"
	AttrExpiresAt = "expires_at"
)

// Attrs holds an item's attributes. Values are string, int64, bool or []byte;
// an int is accepted on write and read back as int64.
type Attrs map[string]any

// Item is one record in a [Table], addressed by its partition key PK and sort key SK.
type Item struct {
	PK    string
	SK    string
	Attrs Attrs
	// ExpiresAt, if not zero, is when the item stops being visible: reads,
	// queries and conditions treat it as absent from that second on, whether or
	// not the backend has physically removed it yet (DynamoDB's TTL sweeper
	// runs up to days late, and DynamoDB Local never runs it).
	ExpiresAt time.Time
}

// String returns the string attribute name, or "" if it is missing or not a string.
func (it Item) String(name string) string {
	s, _ := it.Attrs[name].(string)
	return s
}

// Int returns the integer attribute name, or 0 if it is missing or not an integer.
func (it Item) Int(name string) int64 {
	switch v := it.Attrs[name].(type) {
	case int64:
		return v
	case int:
		return int64(v)
	}
	return 0
}

// Bool returns the boolean attribute name, or false if it is missing or not a boolean.
func (it Item) Bool(name string) bool {
	b, _ := it.Attrs[name].(bool)
	return b
}

// Bytes returns the binary attribute name, or nil if it is missing or not binary.
func (it Item) Bytes(name string) []byte {
	b, _ := it.Attrs[name].([]byte)
	return b
}

// Expired reports whether the item is invisible at now.
func (it Item) Expired(now time.Time) bool {
	return !it.ExpiresAt.IsZero() && now.Unix() >= it.ExpiresAt.Unix()
}

// Condition guards a write. The zero Condition always holds.
type Condition struct {
	op    condOp
	name  string
	value any
}

type condOp int

const (
	condNone condOp = iota
	condAbsent
	condExists
	condEquals
)

// IfAbsent holds when the item does not exist or has expired.
func IfAbsent() Condition { return Condition{op: condAbsent} }

// IfExists holds when the item exists and has not expired.
func IfExists() Condition { return Condition{op: condExists} }

// IfEquals holds when the item exists, has not expired, and its attribute name
// equals value (same type and value).
func IfEquals(name string, value any) Condition {
	return Condition{op: condEquals, name: name, value: normalize(value)}
}

// Holds reports whether c holds for cur, the item's current state (nil when
// absent). Backends that evaluate conditions themselves use it, so that every
// backend means the same thing by each condition.
func (c Condition) Holds(cur *Item, now time.Time) bool {
	live := cur != nil && !cur.Expired(now)
	switch c.op {
	case condAbsent:
		return !live
	case condExists:
		return live
	case condEquals:
		return live && equalValues(cur.Attrs[c.name], c.value)
	}
	return true
}

// Kind reports which condition c is, for backends that translate it.
func (c Condition) Kind() (kind string, name string, value any) {
	switch c.op {
	case condAbsent:
		return "absent", "", nil
	case condExists:
		return "exists", "", nil
	case condEquals:
		return "equals", c.name, c.value
	}
	return "", "", nil
}

func (c Condition) String() string {
	switch c.op {
	case condAbsent:
		return "if absent"
	case condExists:
		return "if exists"
	case condEquals:
		return fmt.Sprintf("if %s = %v", c.name, c.value)
	}
	return "always"
}

// WriteKind says what a [Write] in a transaction does.
type WriteKind int

// The kinds of [Write].
const (
	WritePut WriteKind = iota + 1
	WriteDelete
	WriteCheck
)

// Write is one step of a [Table.Transact]: a put, a delete, or a check that
// writes nothing but must hold for the transaction to commit.
type Write struct {
	Kind WriteKind
	// Item is the item to put; for a delete or a check only PK and SK are read.
	Item Item
	If   Condition
}

// Put returns a transaction write that puts it when c holds.
func Put(it Item, c Condition) Write { return Write{Kind: WritePut, Item: it, If: c} }

// Delete returns a transaction write that deletes the item at pk, sk when c holds.
func Delete(pk, sk string, c Condition) Write {
	return Write{Kind: WriteDelete, Item: Item{PK: pk, SK: sk}, If: c}
}

// Check returns a transaction step that writes nothing but requires c to hold
// for the item at pk, sk.
func Check(pk, sk string, c Condition) Write {
	return Write{Kind: WriteCheck, Item: Item{PK: pk, SK: sk}, If: c}
}

// Query selects items in one partition by sort key. Prefix and the From/To
// range are alternatives: set one or neither (all items of the partition).
type Query struct {
	// Prefix selects sort keys that begin with it.
	Prefix string
	// From and To bound the sort key, both inclusive; either may be empty.
	From, To string
	// Reverse returns items in descending sort-key order.
	Reverse bool
	// Limit is the page size. If zero, defaults to [DefaultQueryLimit]; it may
	// not exceed [MaxQueryLimit].
	Limit int
	// Cursor continues from a previous [Page.Next]; it must come from the same query.
	Cursor string
	// ReadOnly promises that the caller never changes the items' Attrs, so
	// that a backend may hand out attributes other reads share (the
	// embedded table's decoded records) rather than copies of them.
	ReadOnly bool
}

// Page is one page of a query's results.
type Page struct {
	Items []Item
	// Next continues the query; it is empty exactly when no items remain.
	Next string
}

// ValidateKey checks a partition and sort key against the limits every backend shares.
func ValidateKey(pk, sk string) error {
	if err := validateKeyPart("partition key", pk, MaxPKBytes); err != nil {
		return err
	}
	return validateKeyPart("sort key", sk, MaxSKBytes)
}

func validateKeyPart(what, s string, max int) error {
	switch {
	case s == "":
		return fmt.Errorf("%w: empty %s", ErrInvalid, what)
	case len(s) > max:
		return fmt.Errorf("%w: %s is %d bytes, more than %d", ErrInvalid, what, len(s), max)
	case !utf8.ValidString(s):
		return fmt.Errorf("%w: %s is not valid UTF-8", ErrInvalid, what)
	}
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return fmt.Errorf("%w: %s contains a NUL byte", ErrInvalid, what)
		}
	}
	return nil
}

// ValidateItem checks an item's keys and attributes and returns a copy whose
// int values are widened to int64.
func ValidateItem(it Item) (Item, error) {
	if err := ValidateKey(it.PK, it.SK); err != nil {
		return Item{}, err
	}
	out := it
	out.Attrs = make(Attrs, len(it.Attrs))
	size := len(AttrPK) + len(it.PK) + len(AttrSK) + len(it.SK)
	if !it.ExpiresAt.IsZero() {
		size += len(AttrExpiresAt) + numberBytes
	}
	for name, v := range it.Attrs {
		switch name {
		case "":
			return Item{}, fmt.Errorf("%w: empty attribute name", ErrInvalid)
		case AttrPK, AttrSK, AttrExpiresAt:
			return Item{}, fmt.Errorf("%w: attribute name %q is reserved", ErrInvalid, name)
		}
		v = normalize(v)
		n, ok := valueBytes(v)
		if !ok {
			return Item{}, fmt.Errorf("%w: attribute %q has unsupported type %T (want string, int64, bool or []byte)", ErrInvalid, name, v)
		}
		if b, isBytes := v.([]byte); isBytes {
			v = append([]byte(nil), b...)
		}
		out.Attrs[name] = v
		size += len(name) + n
	}
	if size > MaxItemBytes {
		return Item{}, fmt.Errorf("%w: item %s/%s is %d bytes, more than %d", ErrInvalid, it.PK, it.SK, size, MaxItemBytes)
	}
	return out, nil
}

// numberBytes is what DynamoDB charges, at most, for a number.
const numberBytes = 21

// valueBytes returns the size of an attribute value, or false if its type is unsupported.
func valueBytes(v any) (int, bool) {
	switch v := v.(type) {
	case string:
		return len(v), true
	case []byte:
		return len(v), true
	case int64:
		return numberBytes, true
	case bool:
		return 1, true
	}
	return 0, false
}

// itemBytes estimates the stored size of a validated item.
func itemBytes(it Item) int {
	n := len(it.PK) + len(it.SK)
	for name, v := range it.Attrs {
		b, _ := valueBytes(v)
		n += len(name) + b
	}
	return n
}

// ValidateCondition checks that c can be evaluated: an equality names a
// non-reserved attribute and compares it with a supported value. A condition
// that could never hold is a programming error, not a lost race.
func ValidateCondition(c Condition) error {
	if c.op != condEquals {
		return nil
	}
	switch c.name {
	case "", AttrPK, AttrSK, AttrExpiresAt:
		return fmt.Errorf("%w: condition on attribute %q, which is empty or reserved", ErrInvalid, c.name)
	}
	if _, ok := valueBytes(c.value); !ok {
		return fmt.Errorf("%w: condition compares %q with unsupported type %T", ErrInvalid, c.name, c.value)
	}
	return nil
}

// ValidateQuery checks q and returns it with its limit defaulted.
func ValidateQuery(pk string, q Query) (Query, error) {
	if err := validateKeyPart("partition key", pk, MaxPKBytes); err != nil {
		return q, err
	}
	if q.Prefix != "" && (q.From != "" || q.To != "") {
		return q, fmt.Errorf("%w: query sets both a prefix and a range", ErrInvalid)
	}
	if q.From != "" && q.To != "" && q.From > q.To {
		return q, fmt.Errorf("%w: query range is empty (from %q > to %q)", ErrInvalid, q.From, q.To)
	}
	switch {
	case q.Limit == 0:
		q.Limit = DefaultQueryLimit
	case q.Limit < 0 || q.Limit > MaxQueryLimit:
		return q, fmt.Errorf("%w: query limit %d outside 1..%d", ErrInvalid, q.Limit, MaxQueryLimit)
	}
	return q, nil
}

// ValidateTransaction checks the size of a transaction and that no item appears twice.
func ValidateTransaction(writes []Write) ([]Write, error) {
	if len(writes) == 0 || len(writes) > MaxTransactWrites {
		return nil, fmt.Errorf("%w: transaction has %d writes, want 1..%d", ErrInvalid, len(writes), MaxTransactWrites)
	}
	out := make([]Write, len(writes))
	seen := make(map[[2]string]bool, len(writes))
	total := 0
	for i, w := range writes {
		if err := ValidateCondition(w.If); err != nil {
			return nil, err
		}
		k := [2]string{w.Item.PK, w.Item.SK}
		if seen[k] {
			return nil, fmt.Errorf("%w: transaction names item (%q, %q) twice", ErrInvalid, w.Item.PK, w.Item.SK)
		}
		seen[k] = true
		switch w.Kind {
		case WritePut:
			it, err := ValidateItem(w.Item)
			if err != nil {
				return nil, err
			}
			w.Item = it
			total += itemBytes(it)
		case WriteDelete, WriteCheck:
			if err := ValidateKey(w.Item.PK, w.Item.SK); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("%w: transaction write %d has no kind", ErrInvalid, i)
		}
		out[i] = w
	}
	if total > MaxTransactBytes {
		return nil, fmt.Errorf("%w: transaction writes %d bytes, more than %d", ErrInvalid, total, MaxTransactBytes)
	}
	return out, nil
}

// InRange reports whether sk is selected by q's prefix or range.
func (q Query) InRange(sk string) bool {
	if q.Prefix != "" {
		return len(sk) >= len(q.Prefix) && sk[:len(q.Prefix)] == q.Prefix
	}
	return (q.From == "" || sk >= q.From) && (q.To == "" || sk <= q.To)
}

func normalize(v any) any {
	if i, ok := v.(int); ok {
		return int64(i)
	}
	return v
}

func equalValues(a, b any) bool {
	a, b = normalize(a), normalize(b)
	switch a := a.(type) {
	case []byte:
		b, ok := b.([]byte)
		return ok && string(a) == string(b)
	case string, int64, bool:
		return a == b
	}
	return false
}

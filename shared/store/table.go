package store

import (
	"context"
	"encoding/base64"
	"fmt"
)

// Table is a DynamoDB-shaped item store: items addressed by partition and sort
// key, conditional single-item writes, queries within one partition, and
// all-or-nothing transactions.
//
// Every key a domain package writes begins with the caller's tenant; a Table
// itself knows nothing of tenants. All of a Table's methods must be safe for
// use by multiple goroutines.
type Table interface {
	// Get returns the item at pk, sk. A missing or expired item returns [ErrNotFound].
	Get(ctx context.Context, pk, sk string) (Item, error)

	// Put writes it, replacing any item with the same key, when c holds.
	// If c does not hold, Put writes nothing and returns [ErrConditionFailed];
	// if it collided with a transaction in flight, [ErrConflict].
	Put(ctx context.Context, it Item, c Condition) error

	// Delete removes the item at pk, sk when c holds, failing as Put does.
	// Deleting an absent item without a condition is not an error, so an
	// unconditional Delete is idempotent.
	Delete(ctx context.Context, pk, sk string, c Condition) error

	// Query returns one page of the live items in partition pk selected by q, in
	// sort-key order (descending if q.Reverse).
	Query(ctx context.Context, pk string, q Query) (Page, error)

	// Transact applies writes as one: either every condition holds and every
	// write lands, or nothing is written and the error wraps
	// [ErrConditionFailed] (a condition did not hold) or [ErrConflict] (another
	// transaction touched the same items; retry). A transaction holds at most
	// [MaxTransactWrites] writes, each naming a different item.
	Transact(ctx context.Context, writes ...Write) error
}

// EncodeCursor returns the opaque cursor that continues a query after sort key sk.
// Every backend uses it, so a cursor means the same thing on all of them.
func EncodeCursor(sk string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(sk))
}

// DecodeCursor returns the sort key a cursor from [EncodeCursor] continues
// after, checking that it belongs to q.
func DecodeCursor(q Query) (string, error) {
	if q.Cursor == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(q.Cursor)
	if err != nil || len(b) == 0 || !q.InRange(string(b)) {
		return "", fmt.Errorf("%w: cursor does not belong to this query", ErrInvalid)
	}
	return string(b), nil
}

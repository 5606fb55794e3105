// Package storetest holds the behaviour suites every [store.Table] and
// [store.Blobs] backend must pass, and the list of backends a test run can
// reach, so that domain tests run against each of them too.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/switchboard-dev/switchboard/shared/store"
)

// RunTable runs the Table behaviour suite against tbl. Every subtest works
// under its own random partition keys, so backends may be shared between runs.
func RunTable(t *testing.T, tbl store.Table) {
	t.Helper()
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, store.Table, string)
	}{
		{"GetOfAMissingItemIsErrNotFound", testGetMissing},
		{"PutThenGetRoundTripsEveryAttributeType", testRoundTrip},
		{"PutReplacesTheWholeItem", testPutReplaces},
		{"ConditionalPutHoldsOrWritesNothing", testConditionalPut},
		{"ConditionalDeleteHoldsOrDeletesNothing", testConditionalDelete},
		{"UnconditionalDeleteOfAMissingItemSucceeds", testDeleteMissing},
		{"InvalidRequestsAreRejected", testInvalid},
		{"TransactionCommitsEveryWrite", testTransactCommits},
		{"TransactionRollsBackAsAWhole", testTransactRollsBack},
		{"TransactionRejectsOneItemTwice", testTransactDuplicate},
		{"QueryByPrefixInBothDirections", testQueryPrefix},
		{"QueryByRange", testQueryRange},
		{"QueryPaginatesWithCursors", testQueryPagination},
		{"QueryRejectsAForeignCursor", testQueryForeignCursor},
		{"ExpiredItemsAreInvisible", testTTL},
		{"QueryReadsPastManyExpiredItems", testQueryPastExpired},
		{"IfEqualsOnBinaryComparesBytesAndType", testEqualsBinary},
		{"ConditionsThatCouldNeverHoldAreInvalid", testInvalidConditions},
		{"ATransactionOfChecksThatAlwaysHoldSucceeds", testTransactOnlyChecks},
		{"OversizedItemsAreRejected", testOversized},
		{"ConcurrentWritersLoseNothing", testConcurrentWriters},
		{"ConcurrentIncrementsThroughConditionsLoseNothing", testConcurrentIncrements},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pk := NewPrefix(t, tbl)
			tc.fn(t, tbl, pk)
		})
	}
}

// NewPrefix returns a random partition-key prefix for one test and deletes
// every item under the partitions the test used (pk and pk+suffixes listed
// with [TrackPartition]) when it ends.
func NewPrefix(t *testing.T, tbl store.Table) string {
	t.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	pk := "test#" + hex.EncodeToString(b[:])
	t.Cleanup(func() { PurgePartition(t, tbl, pk) })
	return pk
}

// PurgePartition deletes every item in partition pk, expired ones included
// as far as the backend lets a query see them.
func PurgePartition(t testing.TB, tbl store.Table, pk string) {
	t.Helper()
	ctx := context.Background()
	q := store.Query{Limit: store.MaxQueryLimit}
	for {
		page, err := tbl.Query(ctx, pk, q)
		if err != nil {
			t.Errorf("purging %s: %v", pk, err)
			return
		}
		for _, it := range page.Items {
			if err := tbl.Delete(ctx, it.PK, it.SK, store.Condition{}); err != nil {
				t.Errorf("purging %s/%s: %v", it.PK, it.SK, err)
			}
		}
		if page.Next == "" {
			return
		}
		q.Cursor = page.Next
	}
}

var itemCmp = cmp.Options{cmpopts.EquateEmpty(), cmpopts.EquateApproxTime(time.Second)}

func mustPut(t *testing.T, tbl store.Table, it store.Item) {
	t.Helper()
	if err := tbl.Put(context.Background(), it, store.Condition{}); err != nil {
		t.Fatalf("Put(%s/%s): %v", it.PK, it.SK, err)
	}
}

func mustGet(t *testing.T, tbl store.Table, pk, sk string) store.Item {
	t.Helper()
	it, err := tbl.Get(context.Background(), pk, sk)
	if err != nil {
		t.Fatalf("Get(%s/%s): %v", pk, sk, err)
	}
	return it
}

func wantMissing(t *testing.T, tbl store.Table, pk, sk string) {
	t.Helper()
	if _, err := tbl.Get(context.Background(), pk, sk); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get(%s/%s) error = %v, want ErrNotFound", pk, sk, err)
	}
}

func testGetMissing(t *testing.T, tbl store.Table, pk string) {
	wantMissing(t, tbl, pk, "nothing-here")
}

func testRoundTrip(t *testing.T, tbl store.Table, pk string) {
	want := store.Item{
		PK: pk, SK: "a",
		Attrs: store.Attrs{
			"s":     "héllo, wörld",
			"empty": "",
			"n":     int64(-42),
			"big":   int64(1) << 53,
			"i":     int64(7),
			"t":     true,
			"f":     false,
			"b":     []byte{0, 1, 2, 255},
		},
		ExpiresAt: time.Now().Add(time.Hour).Truncate(time.Second),
	}
	in := want
	in.Attrs = store.Attrs{}
	for k, v := range want.Attrs {
		in.Attrs[k] = v
	}
	in.Attrs["i"] = 7 // an int is widened to int64
	mustPut(t, tbl, in)
	got := mustGet(t, tbl, pk, "a")
	if diff := cmp.Diff(want, got, itemCmp); diff != "" {
		t.Errorf("Get mismatch (-want +got):\n%s", diff)
	}
	if got.String("s") != "héllo, wörld" || got.Int("n") != -42 || !got.Bool("t") || string(got.Bytes("b")) != "\x00\x01\x02\xff" {
		t.Errorf("typed accessors returned %q %d %v %v", got.String("s"), got.Int("n"), got.Bool("t"), got.Bytes("b"))
	}
}

func testPutReplaces(t *testing.T, tbl store.Table, pk string) {
	mustPut(t, tbl, store.Item{PK: pk, SK: "a", Attrs: store.Attrs{"x": "1", "y": "2"}})
	mustPut(t, tbl, store.Item{PK: pk, SK: "a", Attrs: store.Attrs{"x": "3"}})
	want := store.Item{PK: pk, SK: "a", Attrs: store.Attrs{"x": "3"}}
	if diff := cmp.Diff(want, mustGet(t, tbl, pk, "a"), itemCmp); diff != "" {
		t.Errorf("Get after replace mismatch (-want +got):\n%s", diff)
	}
}

func testConditionalPut(t *testing.T, tbl store.Table, pk string) {
	ctx := context.Background()
	v1 := store.Item{PK: pk, SK: "c", Attrs: store.Attrs{"ver": int64(1), "who": "first"}}
	v2 := store.Item{PK: pk, SK: "c", Attrs: store.Attrs{"ver": int64(2), "who": "second"}}
	for _, step := range []struct {
		name    string
		item    store.Item
		cond    store.Condition
		wantErr error
		want    store.Item
	}{
		{"IfExistsOnAMissingItemFails", v1, store.IfExists(), store.ErrConditionFailed, store.Item{}},
		{"IfEqualsOnAMissingItemFails", v1, store.IfEquals("ver", 0), store.ErrConditionFailed, store.Item{}},
		{"IfAbsentOnAMissingItemWrites", v1, store.IfAbsent(), nil, v1},
		{"IfAbsentOnAnExistingItemFails", v2, store.IfAbsent(), store.ErrConditionFailed, v1},
		{"IfEqualsWithTheWrongValueFails", v2, store.IfEquals("ver", int64(7)), store.ErrConditionFailed, v1},
		{"IfEqualsWithTheWrongTypeFails", v2, store.IfEquals("ver", "1"), store.ErrConditionFailed, v1},
		{"IfEqualsOnAMissingAttributeFails", v2, store.IfEquals("nope", "x"), store.ErrConditionFailed, v1},
		{"IfEqualsWithTheRightValueWrites", v2, store.IfEquals("ver", 1), nil, v2},
		{"IfExistsOnAnExistingItemWrites", v1, store.IfExists(), nil, v1},
	} {
		err := tbl.Put(ctx, step.item, step.cond)
		if !errors.Is(err, step.wantErr) || (step.wantErr == nil) != (err == nil) {
			t.Fatalf("%s: Put error = %v, want %v", step.name, err, step.wantErr)
		}
		if step.want.PK == "" {
			wantMissing(t, tbl, pk, "c")
			continue
		}
		if diff := cmp.Diff(step.want, mustGet(t, tbl, pk, "c"), itemCmp); diff != "" {
			t.Fatalf("%s: stored item mismatch (-want +got):\n%s", step.name, diff)
		}
	}
}

func testConditionalDelete(t *testing.T, tbl store.Table, pk string) {
	ctx := context.Background()
	it := store.Item{PK: pk, SK: "d", Attrs: store.Attrs{"ver": int64(3)}}
	mustPut(t, tbl, it)
	for _, c := range []store.Condition{store.IfAbsent(), store.IfEquals("ver", 4)} {
		if err := tbl.Delete(ctx, pk, "d", c); !errors.Is(err, store.ErrConditionFailed) {
			t.Fatalf("Delete(%v) error = %v, want ErrConditionFailed", c, err)
		}
		mustGet(t, tbl, pk, "d")
	}
	if err := tbl.Delete(ctx, pk, "d", store.IfEquals("ver", 3)); err != nil {
		t.Fatalf("Delete(if ver = 3): %v", err)
	}
	wantMissing(t, tbl, pk, "d")
	if err := tbl.Delete(ctx, pk, "d", store.IfExists()); !errors.Is(err, store.ErrConditionFailed) {
		t.Fatalf("Delete(if exists) of a deleted item error = %v, want ErrConditionFailed", err)
	}
}

func testDeleteMissing(t *testing.T, tbl store.Table, pk string) {
	for i := 0; i < 2; i++ {
		if err := tbl.Delete(context.Background(), pk, "never", store.Condition{}); err != nil {
			t.Fatalf("Delete #%d: %v", i+1, err)
		}
	}
}

func testInvalid(t *testing.T, tbl store.Table, pk string) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		op   func() error
	}{
		{"EmptyPartitionKey", func() error { return tbl.Put(ctx, store.Item{SK: "x"}, store.Condition{}) }},
		{"EmptySortKey", func() error { return tbl.Put(ctx, store.Item{PK: pk}, store.Condition{}) }},
		{"NULInKey", func() error { return tbl.Put(ctx, store.Item{PK: pk, SK: "a\x00b"}, store.Condition{}) }},
		{"ReservedAttribute", func() error {
			return tbl.Put(ctx, store.Item{PK: pk, SK: "x", Attrs: store.Attrs{"pk": "y"}}, store.Condition{})
		}},
		{"UnsupportedAttributeType", func() error {
			return tbl.Put(ctx, store.Item{PK: pk, SK: "x", Attrs: store.Attrs{"f": 1.5}}, store.Condition{})
		}},
		{"QueryWithPrefixAndRange", func() error {
			_, err := tbl.Query(ctx, pk, store.Query{Prefix: "a", From: "a"})
			return err
		}},
		{"QueryLimitTooLarge", func() error {
			_, err := tbl.Query(ctx, pk, store.Query{Limit: store.MaxQueryLimit + 1})
			return err
		}},
		{"EmptyTransaction", func() error { return tbl.Transact(ctx) }},
		{"TooLargeTransaction", func() error {
			ws := make([]store.Write, store.MaxTransactWrites+1)
			for i := range ws {
				ws[i] = store.Put(store.Item{PK: pk, SK: fmt.Sprintf("big%03d", i)}, store.Condition{})
			}
			return tbl.Transact(ctx, ws...)
		}},
	} {
		if err := tc.op(); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("%s: error = %v, want ErrInvalid", tc.name, err)
		}
	}
	page, err := tbl.Query(ctx, pk, store.Query{})
	if err != nil || len(page.Items) != 0 {
		t.Errorf("after invalid requests the partition holds %v (err %v), want nothing", page.Items, err)
	}
}

func testTransactCommits(t *testing.T, tbl store.Table, pk string) {
	ctx := context.Background()
	mustPut(t, tbl, store.Item{PK: pk, SK: "old", Attrs: store.Attrs{"v": "x"}})
	mustPut(t, tbl, store.Item{PK: pk, SK: "guard", Attrs: store.Attrs{"ok": true}})
	err := tbl.Transact(ctx,
		store.Put(store.Item{PK: pk, SK: "new1", Attrs: store.Attrs{"v": "1"}}, store.IfAbsent()),
		store.Put(store.Item{PK: pk + "#other", SK: "new2", Attrs: store.Attrs{"v": "2"}}, store.Condition{}),
		store.Delete(pk, "old", store.IfEquals("v", "x")),
		store.Check(pk, "guard", store.IfEquals("ok", true)),
	)
	t.Cleanup(func() { PurgePartition(t, tbl, pk+"#other") })
	if err != nil {
		t.Fatalf("Transact: %v", err)
	}
	mustGet(t, tbl, pk, "new1")
	mustGet(t, tbl, pk+"#other", "new2")
	wantMissing(t, tbl, pk, "old")
	mustGet(t, tbl, pk, "guard")
}

func testTransactRollsBack(t *testing.T, tbl store.Table, pk string) {
	ctx := context.Background()
	orig := store.Item{PK: pk, SK: "keep", Attrs: store.Attrs{"v": "orig"}}
	mustPut(t, tbl, orig)
	mustPut(t, tbl, store.Item{PK: pk, SK: "guard", Attrs: store.Attrs{"ok": false}})
	mustPut(t, tbl, store.Item{PK: pk, SK: "flag", Attrs: store.Attrs{"ok": false}})
	for _, tc := range []struct {
		name   string
		failer store.Write
	}{
		{"LastPutFails", store.Put(store.Item{PK: pk, SK: "keep2"}, store.IfExists())},
		{"DeleteFails", store.Delete(pk, "absent", store.IfExists())},
		{"CheckFails", store.Check(pk, "flag", store.IfEquals("ok", true))},
	} {
		err := tbl.Transact(ctx,
			store.Put(store.Item{PK: pk, SK: "keep", Attrs: store.Attrs{"v": "changed"}}, store.Condition{}),
			store.Put(store.Item{PK: pk, SK: "fresh"}, store.IfAbsent()),
			store.Delete(pk, "guard", store.Condition{}),
			tc.failer,
		)
		if !errors.Is(err, store.ErrConditionFailed) {
			t.Fatalf("%s: Transact error = %v, want ErrConditionFailed", tc.name, err)
		}
		if diff := cmp.Diff(orig, mustGet(t, tbl, pk, "keep"), itemCmp); diff != "" {
			t.Fatalf("%s: a write of a failed transaction landed (-want +got):\n%s", tc.name, diff)
		}
		wantMissing(t, tbl, pk, "fresh")
		mustGet(t, tbl, pk, "guard")
	}
}

func testTransactDuplicate(t *testing.T, tbl store.Table, pk string) {
	err := tbl.Transact(context.Background(),
		store.Put(store.Item{PK: pk, SK: "a"}, store.Condition{}),
		store.Delete(pk, "a", store.Condition{}),
	)
	if !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("Transact naming one item twice: error = %v, want ErrInvalid", err)
	}
	wantMissing(t, tbl, pk, "a")
}

func putKeys(t *testing.T, tbl store.Table, pk string, sks ...string) {
	t.Helper()
	for _, sk := range sks {
		mustPut(t, tbl, store.Item{PK: pk, SK: sk, Attrs: store.Attrs{"v": sk}})
	}
}

func keysOf(items []store.Item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.SK
	}
	return out
}

func testQueryPrefix(t *testing.T, tbl store.Table, pk string) {
	putKeys(t, tbl, pk, "a", "msg#0001", "msg#0002", "msg#0010", "msg$", "msh", "z")
	mustPut(t, tbl, store.Item{PK: pk + "x", SK: "msg#0003"}) // a neighbouring partition
	t.Cleanup(func() { PurgePartition(t, tbl, pk+"x") })
	for _, tc := range []struct {
		name string
		q    store.Query
		want []string
	}{
		{"Forward", store.Query{Prefix: "msg#"}, []string{"msg#0001", "msg#0002", "msg#0010"}},
		{"Reverse", store.Query{Prefix: "msg#", Reverse: true}, []string{"msg#0010", "msg#0002", "msg#0001"}},
		{"ReverseLimited", store.Query{Prefix: "msg#", Reverse: true, Limit: 2}, []string{"msg#0010", "msg#0002"}},
		{"WholePartition", store.Query{}, []string{"a", "msg#0001", "msg#0002", "msg#0010", "msg$", "msh", "z"}},
		{"WholePartitionReverse", store.Query{Reverse: true, Limit: 3}, []string{"z", "msh", "msg$"}},
		{"NoMatch", store.Query{Prefix: "nothing"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			page, err := tbl.Query(context.Background(), pk, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, keysOf(page.Items), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Query mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func testQueryRange(t *testing.T, tbl store.Table, pk string) {
	putKeys(t, tbl, pk, "m01", "m02", "m03", "m04", "m05")
	for _, tc := range []struct {
		name string
		q    store.Query
		want []string
	}{
		{"Closed", store.Query{From: "m02", To: "m04"}, []string{"m02", "m03", "m04"}},
		{"ClosedReverse", store.Query{From: "m02", To: "m04", Reverse: true}, []string{"m04", "m03", "m02"}},
		{"FromOnly", store.Query{From: "m04"}, []string{"m04", "m05"}},
		{"ToOnlyReverse", store.Query{To: "m02", Reverse: true}, []string{"m02", "m01"}},
		{"BoundsBetweenKeys", store.Query{From: "m015", To: "m035"}, []string{"m02", "m03"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			page, err := tbl.Query(context.Background(), pk, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, keysOf(page.Items), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Query mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func testQueryPagination(t *testing.T, tbl store.Table, pk string) {
	var all []string
	for i := 0; i < 23; i++ {
		all = append(all, fmt.Sprintf("p%03d", i))
	}
	putKeys(t, tbl, pk, all...)
	// An expired item in the middle must neither appear nor end a page early.
	mustPut(t, tbl, store.Item{PK: pk, SK: "p010x", ExpiresAt: time.Now().Add(-time.Hour)})
	for _, reverse := range []bool{false, true} {
		for _, limit := range []int{1, 5, 23, 50} {
			t.Run(fmt.Sprintf("Reverse=%v/Limit=%d", reverse, limit), func(t *testing.T) {
				q := store.Query{Prefix: "p", Reverse: reverse, Limit: limit}
				var got []string
				pages := 0
				for {
					page, err := tbl.Query(context.Background(), pk, q)
					if err != nil {
						t.Fatal(err)
					}
					pages++
					if len(page.Items) > limit {
						t.Fatalf("page %d has %d items, limit %d", pages, len(page.Items), limit)
					}
					if page.Next != "" && len(page.Items) != limit {
						t.Fatalf("page %d has %d items and a cursor; only full pages may continue", pages, len(page.Items))
					}
					got = append(got, keysOf(page.Items)...)
					if page.Next == "" {
						break
					}
					q.Cursor = page.Next
				}
				want := append([]string(nil), all...)
				if reverse {
					for i, j := 0, len(want)-1; i < j; i, j = i+1, j-1 {
						want[i], want[j] = want[j], want[i]
					}
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("paged keys mismatch (-want +got):\n%s", diff)
				}
				if wantPages := (len(all) + limit - 1) / limit; pages != wantPages {
					t.Errorf("took %d pages, want %d", pages, wantPages)
				}
			})
		}
	}
}

func testQueryForeignCursor(t *testing.T, tbl store.Table, pk string) {
	putKeys(t, tbl, pk, "a1", "a2", "b1")
	page, err := tbl.Query(context.Background(), pk, store.Query{Prefix: "b", Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	bad := []string{"not base64!", store.EncodeCursor("a1")}
	if page.Next != "" {
		t.Fatalf("single-item page has a cursor %q", page.Next)
	}
	for _, c := range bad {
		if _, err := tbl.Query(context.Background(), pk, store.Query{Prefix: "b", Cursor: c}); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("Query with cursor %q: error = %v, want ErrInvalid", c, err)
		}
	}
}

func testTTL(t *testing.T, tbl store.Table, pk string) {
	ctx := context.Background()
	past := time.Now().Add(-time.Hour)
	future := time.Now().Add(time.Hour)
	mustPut(t, tbl, store.Item{PK: pk, SK: "gone", Attrs: store.Attrs{"v": int64(1)}, ExpiresAt: past})
	mustPut(t, tbl, store.Item{PK: pk, SK: "live", ExpiresAt: future})
	wantMissing(t, tbl, pk, "gone")
	mustGet(t, tbl, pk, "live")
	page, err := tbl.Query(ctx, pk, store.Query{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"live"}, keysOf(page.Items)); diff != "" {
		t.Errorf("Query returned expired items (-want +got):\n%s", diff)
	}
	// Conditions see an expired item as absent.
	for _, c := range []store.Condition{store.IfExists(), store.IfEquals("v", 1)} {
		if err := tbl.Put(ctx, store.Item{PK: pk, SK: "gone", ExpiresAt: past}, c); !errors.Is(err, store.ErrConditionFailed) {
			t.Errorf("Put(%v) over an expired item: error = %v, want ErrConditionFailed", c, err)
		}
	}
	if err := tbl.Transact(ctx, store.Check(pk, "gone", store.IfExists())); !errors.Is(err, store.ErrConditionFailed) {
		t.Errorf("Transact check(if exists) of an expired item: error = %v, want ErrConditionFailed", err)
	}
	if err := tbl.Put(ctx, store.Item{PK: pk, SK: "gone", Attrs: store.Attrs{"v": int64(2)}}, store.IfAbsent()); err != nil {
		t.Fatalf("Put(if absent) over an expired item: %v", err)
	}
	if got := mustGet(t, tbl, pk, "gone"); got.Int("v") != 2 || !got.ExpiresAt.IsZero() {
		t.Errorf("item written over an expired one = %+v, want v=2 and no expiry", got)
	}
}

func testConcurrentWriters(t *testing.T, tbl store.Table, pk string) {
	const writers = 100
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for i := 0; i < writers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- tbl.Put(ctx, store.Item{PK: pk, SK: fmt.Sprintf("w%03d", i), Attrs: store.Attrs{"i": int64(i)}}, store.IfAbsent())
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent Put: %v", err)
		}
	}
	got := CountItems(t, tbl, pk, "w")
	if got != writers {
		t.Fatalf("after %d concurrent writers the partition holds %d items", writers, got)
	}
}

// testConcurrentIncrements races writers through a read-check-write loop on one
// counter item, the pattern the domain packages use for sequences.
func testConcurrentIncrements(t *testing.T, tbl store.Table, pk string) {
	const writers = 100
	ctx := context.Background()
	mustPut(t, tbl, store.Item{PK: pk, SK: "counter", Attrs: store.Attrs{"n": int64(0)}})
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for i := 0; i < writers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- store.Retry(ctx, func() error {
				cur, err := tbl.Get(ctx, pk, "counter")
				if err != nil {
					return err
				}
				n := cur.Int("n")
				return tbl.Transact(ctx,
					store.Put(store.Item{PK: pk, SK: "counter", Attrs: store.Attrs{"n": n + 1}}, store.IfEquals("n", n)),
					store.Put(store.Item{PK: pk, SK: fmt.Sprintf("seq%04d", n+1), Attrs: store.Attrs{"by": int64(i)}}, store.IfAbsent()),
				)
			})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent increment: %v", err)
		}
	}
	if n := mustGet(t, tbl, pk, "counter").Int("n"); n != writers {
		t.Errorf("counter = %d after %d increments", n, writers)
	}
	if got := CountItems(t, tbl, pk, "seq"); got != writers {
		t.Errorf("%d sequence items after %d increments", got, writers)
	}
}

// CountItems counts the live items in partition pk whose sort keys begin with prefix.
func CountItems(t testing.TB, tbl store.Table, pk, prefix string) int {
	t.Helper()
	n := 0
	q := store.Query{Prefix: prefix, Limit: store.MaxQueryLimit}
	for {
		page, err := tbl.Query(context.Background(), pk, q)
		if err != nil {
			t.Fatalf("Query(%s, %q): %v", pk, prefix, err)
		}
		n += len(page.Items)
		if page.Next == "" {
			return n
		}
		q.Cursor = page.Next
	}
}

func testQueryPastExpired(t *testing.T, tbl store.Table, pk string) {
	past := time.Now().Add(-time.Hour)
	putKeys(t, tbl, pk, "a")
	for i := 0; i < 40; i++ {
		mustPut(t, tbl, store.Item{PK: pk, SK: fmt.Sprintf("e%02d", i), ExpiresAt: past})
	}
	putKeys(t, tbl, pk, "z")
	for _, reverse := range []bool{false, true} {
		q := store.Query{Limit: 1, Reverse: reverse}
		var got []string
		for {
			page, err := tbl.Query(context.Background(), pk, q)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, keysOf(page.Items)...)
			if page.Next == "" {
				break
			}
			q.Cursor = page.Next
		}
		want := []string{"a", "z"}
		if reverse {
			want = []string{"z", "a"}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Reverse=%v mismatch (-want +got):\n%s", reverse, diff)
		}
	}
}

func testEqualsBinary(t *testing.T, tbl store.Table, pk string) {
	mustPut(t, tbl, store.Item{PK: pk, SK: "k", Attrs: store.Attrs{"b": []byte{1, 2}, "e": []byte{}}})
	for _, tc := range []struct {
		cond store.Condition
		want error
	}{
		{store.IfEquals("b", "\x01\x02"), store.ErrConditionFailed},
		{store.IfEquals("b", []byte{1, 3}), store.ErrConditionFailed},
		{store.IfEquals("e", []byte(nil)), nil},
		{store.IfEquals("b", []byte{1, 2}), nil},
	} {
		err := tbl.Put(context.Background(), store.Item{PK: pk, SK: "k", Attrs: store.Attrs{"b": []byte{1, 2}, "e": []byte{}}}, tc.cond)
		if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
			t.Errorf("Put(%v) error = %v, want %v", tc.cond, err, tc.want)
		}
	}
}

func testInvalidConditions(t *testing.T, tbl store.Table, pk string) {
	ctx := context.Background()
	orig := store.Item{PK: pk, SK: "k", Attrs: store.Attrs{"f": "x"}}
	mustPut(t, tbl, orig)
	for _, c := range []store.Condition{
		store.IfEquals(store.AttrPK, pk),
		store.IfEquals(store.AttrSK, "k"),
		store.IfEquals(store.AttrExpiresAt, int64(1)),
		store.IfEquals("", "x"),
		store.IfEquals("f", 1.5),
	} {
		if err := tbl.Put(ctx, store.Item{PK: pk, SK: "k"}, c); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("Put(%v) error = %v, want ErrInvalid", c, err)
		}
		if err := tbl.Delete(ctx, pk, "k", c); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("Delete(%v) error = %v, want ErrInvalid", c, err)
		}
		if err := tbl.Transact(ctx, store.Check(pk, "k", c)); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("Transact(check %v) error = %v, want ErrInvalid", c, err)
		}
	}
	if diff := cmp.Diff(orig, mustGet(t, tbl, pk, "k"), itemCmp); diff != "" {
		t.Errorf("item changed by rejected writes (-want +got):\n%s", diff)
	}
}

func testTransactOnlyChecks(t *testing.T, tbl store.Table, pk string) {
	if err := tbl.Transact(context.Background(), store.Check(pk, "nothing", store.Condition{})); err != nil {
		t.Fatalf("Transact: %v", err)
	}
}

func testOversized(t *testing.T, tbl store.Table, pk string) {
	ctx := context.Background()
	big := store.Item{PK: pk, SK: "big", Attrs: store.Attrs{"v": strings.Repeat("x", store.MaxItemBytes)}}
	if err := tbl.Put(ctx, big, store.Condition{}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("Put of a %d-byte item: error = %v, want ErrInvalid", store.MaxItemBytes, err)
	}
	wantMissing(t, tbl, pk, "big")
	// Just under the limit is fine.
	ok := store.Item{PK: pk, SK: "ok", Attrs: store.Attrs{"v": strings.Repeat("x", store.MaxItemBytes-100)}}
	mustPut(t, tbl, ok)
	// A transaction of items each under the limit but over 4 MB in all is rejected.
	var ws []store.Write
	for i := 0; i < 11; i++ {
		it := store.Item{PK: pk, SK: fmt.Sprintf("t%02d", i), Attrs: store.Attrs{"v": strings.Repeat("y", store.MaxItemBytes-100)}}
		ws = append(ws, store.Put(it, store.Condition{}))
	}
	if err := tbl.Transact(ctx, ws...); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("Transact of 11 items of ~400 KB: error = %v, want ErrInvalid", err)
	}
	wantMissing(t, tbl, pk, "t00")
}

// Package dynamo is the [store.Table] backend on Amazon DynamoDB. Every item
// lives in one table keyed by the string attributes pk (partition key) and sk
// (sort key); an item's expiry is the Number attribute expires_at, in epoch
// seconds, which the table's TTL sweeper removes. The sweeper runs up to days
// late (and never on DynamoDB Local), so reads, queries and conditions treat
// an expired item as absent themselves.
//
// It calls DynamoDB's JSON 1.0 protocol through shared/awsjson, signed with
// the SDK's signer, rather than through the SDK's DynamoDB client, whose
// package initialisers cost every cold start of every function 0.8 ms
// (GODEBUG=inittrace=1; issue 11).
//
// A Lambda opens the Table once at cold start and shares it:
//
//	tbl := dynamo.New(awsCfg, cfg.Table) // cfg.Table from the function's Config
//	err = tbl.Put(ctx, store.Item{PK: pk, SK: "meta", Attrs: attrs}, store.IfAbsent())
//	if errors.Is(err, store.ErrConditionFailed) {
//		// the item is already there
//	}
//
// [CreateTable] creates a table with this layout, for tests and local
// development against DynamoDB Local; the deployed table comes from the SAM
// template and uses the same attribute names.
package dynamo

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/switchboard-dev/switchboard/shared/awsjson"
	"github.com/switchboard-dev/switchboard/shared/store"
)

var _ store.Table = (*Table)(nil)

// The bounds of DynamoDB's answers, which awsjson reads whole. An item is
// at most 400 KB ([store.MaxItemBytes]) counted as DynamoDB counts it, names
// and values in raw bytes, which its JSON makes up to about ten times longer:
// tens of thousands of attributes whose short names are control characters
// (each escaped as \u0000) and whose values are empty, each wrapped in
// {"S":""} (TestTheLongestItemsJSONFitsItsBound builds one). A Query page is
// at most 1 MB of items before the filter, and the item that crosses it; a
// write answers with at most its cancellation reasons, one per write of a
// transaction.
const (
	jsonGrowth     = 10
	maxItemAnswer  = jsonGrowth*store.MaxItemBytes + 64<<10
	maxPageAnswer  = jsonGrowth*(1<<20+store.MaxItemBytes) + 64<<10
	maxWriteAnswer = 64 << 10
)

// Table is a [store.Table] in one DynamoDB table. Its methods are safe for use
// by multiple goroutines.
type Table struct {
	cfg  aws.Config
	name string
	now  func() time.Time
}

// New returns a Table that stores items in the DynamoDB table name, calling
// DynamoDB as cfg configures it (region, credentials, endpoint: an
// AWS_ENDPOINT_URL_DYNAMODB among its sources, HTTP client); cfg's Retryer
// and RetryMaxAttempts are not used: calls are tried as [awsjson.Retry]
// does. It does no I/O: a missing table shows up as an error from the first
// call.
func New(cfg aws.Config, name string) *Table {
	return &Table{cfg: cfg, name: name, now: time.Now}
}

// call makes the DynamoDB call action, tried again as [awsjson.Retry] does.
func (t *Table) call(ctx context.Context, action string, in, out any, limit int64) error {
	return awsjson.Retry(ctx, func() (bool, error) {
		return awsjson.Call(ctx, &t.cfg, awsjson.DynamoDB, action, in, out, limit)
	})
}

// A value is a DynamoDB attribute value of one of the types a [store.Item]
// holds, in DynamoDB's JSON: {"S": "text"}, {"N": "12"}, {"B": "<base64>"}
// or {"BOOL": true}. A value read with none of them set has another type.
type value struct {
	S    *string `json:",omitempty"`
	N    *string `json:",omitempty"`
	B    *[]byte `json:",omitempty"`
	BOOL *bool   `json:",omitempty"`
}

// An attrs is an item's, or a key's, attribute values by name.
type attrs = map[string]value

// cond is a condition expression with the names and values it uses, as
// DynamoDB's write requests name them; an empty Expr always holds.
type cond struct {
	Expr   string            `json:"ConditionExpression,omitempty"`
	Names  map[string]string `json:"ExpressionAttributeNames,omitempty"`
	Values attrs             `json:"ExpressionAttributeValues,omitempty"`
}

// write is a PutItem or DeleteItem request, or one write of a
// TransactWriteItems request.
type write struct {
	TableName string
	Item      attrs `json:",omitempty"`
	Key       attrs `json:",omitempty"`
	cond
}

// Get implements [store.Table]. It reads with strong consistency, so it sees
// every write that returned before it.
func (t *Table) Get(ctx context.Context, pk, sk string) (store.Item, error) {
	if err := store.ValidateKey(pk, sk); err != nil {
		return store.Item{}, fmt.Errorf("dynamo: get %s/%s: %w", pk, sk, err)
	}
	in := struct {
		TableName      string
		Key            attrs
		ConsistentRead bool
	}{t.name, itemKey(pk, sk), true}
	var out struct{ Item attrs }
	if err := t.call(ctx, "GetItem", in, &out, maxItemAnswer); err != nil {
		return store.Item{}, fmt.Errorf("dynamo: get %s/%s: %w", pk, sk, err)
	}
	if len(out.Item) == 0 {
		return store.Item{}, fmt.Errorf("dynamo: get %s/%s: %w", pk, sk, store.ErrNotFound)
	}
	it, err := unmarshalItem(out.Item)
	if err != nil {
		return store.Item{}, fmt.Errorf("dynamo: get %s/%s: %w", pk, sk, err)
	}
	if it.Expired(t.now()) {
		return store.Item{}, fmt.Errorf("dynamo: get %s/%s: %w", pk, sk, store.ErrNotFound)
	}
	return it, nil
}

// Put implements [store.Table].
func (t *Table) Put(ctx context.Context, it store.Item, c store.Condition) error {
	it, err := store.ValidateItem(it)
	if err == nil {
		err = store.ValidateCondition(c)
	}
	if err != nil {
		return fmt.Errorf("dynamo: put %s/%s: %w", it.PK, it.SK, err)
	}
	cond, ok := condition(c, t.now())
	if !ok {
		return fmt.Errorf("dynamo: put %s: %w", desc(it.PK, it.SK, c), store.ErrConditionFailed)
	}
	if err := t.call(ctx, "PutItem", write{TableName: t.name, Item: marshalItem(it), cond: cond}, nil, maxWriteAnswer); err != nil {
		return fmt.Errorf("dynamo: put %s: %w", desc(it.PK, it.SK, c), mapError(err))
	}
	return nil
}

// Delete implements [store.Table].
func (t *Table) Delete(ctx context.Context, pk, sk string, c store.Condition) error {
	err := store.ValidateKey(pk, sk)
	if err == nil {
		err = store.ValidateCondition(c)
	}
	if err != nil {
		return fmt.Errorf("dynamo: delete %s/%s: %w", pk, sk, err)
	}
	cond, ok := condition(c, t.now())
	if !ok {
		return fmt.Errorf("dynamo: delete %s: %w", desc(pk, sk, c), store.ErrConditionFailed)
	}
	if err := t.call(ctx, "DeleteItem", write{TableName: t.name, Key: itemKey(pk, sk), cond: cond}, nil, maxWriteAnswer); err != nil {
		return fmt.Errorf("dynamo: delete %s: %w", desc(pk, sk, c), mapError(err))
	}
	return nil
}

// Transact implements [store.Table] with one TransactWriteItems call. A
// [store.Check] whose condition always holds is left out of the call, since
// DynamoDB requires every ConditionCheck to have an expression.
func (t *Table) Transact(ctx context.Context, writes ...store.Write) error {
	writes, err := store.ValidateTransaction(writes)
	if err != nil {
		return fmt.Errorf("dynamo: transact: %w", err)
	}
	now := t.now()
	type transactItem struct {
		Put, Delete, ConditionCheck *write `json:",omitempty"`
	}
	items := make([]transactItem, 0, len(writes))
	// index[i] is the position in writes of items[i], to name the write that
	// a cancellation reason points at.
	index := make([]int, 0, len(writes))
	for i, w := range writes {
		cond, ok := condition(w.If, now)
		if !ok {
			return fmt.Errorf("dynamo: transact: write %d %s: %w", i, desc(w.Item.PK, w.Item.SK, w.If), store.ErrConditionFailed)
		}
		var ti transactItem
		switch w.Kind {
		case store.WritePut:
			ti.Put = &write{TableName: t.name, Item: marshalItem(w.Item), cond: cond}
		case store.WriteDelete:
			ti.Delete = &write{TableName: t.name, Key: itemKey(w.Item.PK, w.Item.SK), cond: cond}
		case store.WriteCheck:
			if cond.Expr == "" {
				continue
			}
			ti.ConditionCheck = &write{TableName: t.name, Key: itemKey(w.Item.PK, w.Item.SK), cond: cond}
		}
		items = append(items, ti)
		index = append(index, i)
	}
	if len(items) == 0 {
		return nil // only checks that always hold
	}
	// One token for every try, so a retry of a transaction that did commit
	// is answered from DynamoDB's idempotency window instead of being
	// applied twice, as the SDK's client did.
	in := struct {
		TransactItems      []transactItem
		ClientRequestToken string
	}{items, rand.Text()}
	err = t.call(ctx, "TransactWriteItems", in, nil, maxWriteAnswer)
	if err == nil {
		return nil
	}
	// Reasons are in the order of TransactItems; a condition that did not
	// hold is the definite answer, so it wins over a conflict elsewhere.
	reasons := cancellationReasons(err)
	for _, want := range []string{"ConditionalCheckFailed", "TransactionConflict"} {
		for j, r := range reasons {
			if r != want || j >= len(index) {
				continue
			}
			w := writes[index[j]]
			return fmt.Errorf("dynamo: transact: write %d %s: %w", index[j], desc(w.Item.PK, w.Item.SK, w.If), mapError(err))
		}
	}
	return fmt.Errorf("dynamo: transact: %w", mapError(err))
}

// Query implements [store.Table]. DynamoDB applies Limit before the filter
// that hides expired items, so one DynamoDB page may hold fewer live items
// than asked for, or none; Query reads on until it has one live item more than
// the page holds, which tells it whether to return a cursor.
func (t *Table) Query(ctx context.Context, pk string, q store.Query) (store.Page, error) {
	q, err := store.ValidateQuery(pk, q)
	if err != nil {
		return store.Page{}, fmt.Errorf("dynamo: query %s: %w", pk, err)
	}
	after, err := store.DecodeCursor(q)
	if err != nil {
		return store.Page{}, fmt.Errorf("dynamo: query %s: %w", pk, err)
	}
	names := map[string]string{"#pk": store.AttrPK, "#exp": store.AttrExpiresAt}
	values := attrs{":pk": str(pk), ":now": number(t.now().Unix())}
	keyCond := "#pk = :pk"
	switch {
	case q.Prefix != "":
		keyCond += " AND begins_with(#sk, :prefix)"
		values[":prefix"] = str(q.Prefix)
	case q.From != "" && q.To != "":
		keyCond += " AND #sk BETWEEN :from AND :to"
		values[":from"] = str(q.From)
		values[":to"] = str(q.To)
	case q.From != "":
		keyCond += " AND #sk >= :from"
		values[":from"] = str(q.From)
	case q.To != "":
		keyCond += " AND #sk <= :to"
		values[":to"] = str(q.To)
	}
	if q.Prefix != "" || q.From != "" || q.To != "" {
		names["#sk"] = store.AttrSK
	}
	in := struct {
		TableName                 string
		KeyConditionExpression    string
		FilterExpression          string
		ExpressionAttributeNames  map[string]string
		ExpressionAttributeValues attrs
		ScanIndexForward          bool
		ConsistentRead            bool
		Limit                     int
		ExclusiveStartKey         attrs `json:",omitempty"`
	}{
		TableName:                 t.name,
		KeyConditionExpression:    keyCond,
		FilterExpression:          "attribute_not_exists(#exp) OR #exp > :now",
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
		ScanIndexForward:          !q.Reverse,
		ConsistentRead:            true,
	}
	if after != "" {
		in.ExclusiveStartKey = itemKey(pk, after)
	}
	var items []store.Item
	for len(items) <= q.Limit {
		in.Limit = q.Limit + 1 - len(items)
		var out struct {
			Items            []attrs
			LastEvaluatedKey attrs
		}
		if err := t.call(ctx, "Query", in, &out, maxPageAnswer); err != nil {
			return store.Page{}, fmt.Errorf("dynamo: query %s: %w", pk, err)
		}
		for _, av := range out.Items {
			it, err := unmarshalItem(av)
			if err != nil {
				return store.Page{}, fmt.Errorf("dynamo: query %s: %w", pk, err)
			}
			items = append(items, it)
		}
		if len(out.LastEvaluatedKey) == 0 {
			break
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
	var page store.Page
	if len(items) > q.Limit {
		items = items[:q.Limit]
		page.Next = store.EncodeCursor(items[len(items)-1].SK)
	}
	page.Items = items
	return page, nil
}

// condition translates c into a DynamoDB condition expression that holds
// exactly when c.Holds would, treating an item whose expires_at is not after
// now as absent. It reports false for a condition that can never hold
// (see [store.Condition.Holds]): an equality on a key or TTL attribute, which
// are not among an item's Attrs, or with a value of no attribute type.
func condition(c store.Condition, now time.Time) (cond, bool) {
	kind, name, v := c.Kind()
	live := "attribute_exists(#pk) AND (attribute_not_exists(#exp) OR #exp > :now)"
	e := cond{
		Names:  map[string]string{"#pk": store.AttrPK, "#exp": store.AttrExpiresAt},
		Values: attrs{":now": number(now.Unix())},
	}
	switch kind {
	case "absent":
		e.Expr = "attribute_not_exists(#pk) OR #exp <= :now"
	case "exists":
		e.Expr = live
	case "equals":
		switch name {
		case "", store.AttrPK, store.AttrSK, store.AttrExpiresAt:
			return cond{}, false
		}
		m, ok := marshalValue(v)
		if !ok {
			return cond{}, false
		}
		// DynamoDB's = is false between values of different types, so a
		// string "1" does not equal the number 1, as in store.Condition.Holds.
		e.Expr = live + " AND #a = :v"
		e.Names["#a"] = name
		e.Values[":v"] = m
	default:
		return cond{}, true
	}
	return e, true
}

// cancellationReasons returns the code of each write's reason, in the order
// of the writes, if err is DynamoDB's TransactionCanceledException.
func cancellationReasons(err error) []string {
	var e *awsjson.Error
	if !errors.As(err, &e) || e.Code != "TransactionCanceledException" {
		return nil
	}
	var answer struct{ CancellationReasons []struct{ Code string } }
	_ = json.Unmarshal(e.Answer, &answer) // without reasons, the cancellation is not mapped
	codes := make([]string, len(answer.CancellationReasons))
	for i, r := range answer.CancellationReasons {
		codes[i] = r.Code
	}
	return codes
}

// mapError maps DynamoDB's lost-race errors to [store.ErrConditionFailed]
// and [store.ErrConflict], keeping err in the chain for its details.
func mapError(err error) error {
	switch {
	case awsjson.IsCode(err, "ConditionalCheckFailedException"):
		return fmt.Errorf("%w: %w", store.ErrConditionFailed, err)
	case awsjson.IsCode(err, "TransactionCanceledException"):
		reasons := cancellationReasons(err)
		for _, want := range []struct {
			code string
			err  error
		}{{"ConditionalCheckFailed", store.ErrConditionFailed}, {"TransactionConflict", store.ErrConflict}} {
			for _, r := range reasons {
				if r == want.code {
					return fmt.Errorf("%w: %w", want.err, err)
				}
			}
		}
	case awsjson.IsCode(err, "TransactionConflictException"), awsjson.IsCode(err, "TransactionInProgressException"):
		// A single-item write that collides with a transaction in flight
		// fails with TransactionConflictException.
		return fmt.Errorf("%w: %w", store.ErrConflict, err)
	}
	return err
}

// desc names an item and, if it has one, the condition of a write to it.
func desc(pk, sk string, c store.Condition) string {
	if kind, _, _ := c.Kind(); kind == "" {
		return pk + "/" + sk
	}
	return fmt.Sprintf("%s/%s (%v)", pk, sk, c)
}

func itemKey(pk, sk string) attrs {
	return attrs{store.AttrPK: str(pk), store.AttrSK: str(sk)}
}

func str(s string) value { return value{S: &s} }

func number(n int64) value {
	s := strconv.FormatInt(n, 10)
	return value{N: &s}
}

// marshalItem returns the attribute values of it, which [store.ValidateItem]
// has checked.
func marshalItem(it store.Item) attrs {
	av := itemKey(it.PK, it.SK)
	if !it.ExpiresAt.IsZero() {
		av[store.AttrExpiresAt] = number(it.ExpiresAt.Unix())
	}
	for name, v := range it.Attrs {
		if m, ok := marshalValue(v); ok {
			av[name] = m
		}
	}
	return av
}

// marshalValue returns the attribute value of v, or false if v has none of
// the attribute types a [store.Item] holds.
func marshalValue(v any) (value, bool) {
	switch v := v.(type) {
	case string:
		return str(v), true
	case int64:
		return number(v), true
	case int:
		return number(int64(v)), true
	case bool:
		return value{BOOL: &v}, true
	case []byte:
		if v == nil {
			v = []byte{} // an empty binary value, not a missing one
		}
		return value{B: &v}, true
	}
	return value{}, false
}

// unmarshalItem returns the item av holds. It fails on attribute types a
// [store.Item] cannot hold, which only a writer other than this package can
// have put there.
func unmarshalItem(av attrs) (store.Item, error) {
	var it store.Item
	pk, sk := av[store.AttrPK], av[store.AttrSK]
	if pk.S == nil || kinds(pk) != 1 {
		return it, fmt.Errorf("item has no string attribute %q", store.AttrPK)
	}
	if sk.S == nil || kinds(sk) != 1 {
		return it, fmt.Errorf("item %s has no string attribute %q", *pk.S, store.AttrSK)
	}
	it.PK, it.SK = *pk.S, *sk.S
	it.Attrs = make(store.Attrs, len(av))
	for name, v := range av {
		switch name {
		case store.AttrPK, store.AttrSK:
			continue
		case store.AttrExpiresAt:
			if v.N == nil || kinds(v) != 1 {
				return it, fmt.Errorf("item %s/%s: attribute %q is not a number", it.PK, it.SK, name)
			}
			sec, err := strconv.ParseInt(*v.N, 10, 64)
			if err != nil {
				return it, fmt.Errorf("item %s/%s: attribute %q: %w", it.PK, it.SK, name, err)
			}
			it.ExpiresAt = time.Unix(sec, 0)
			continue
		}
		if kinds(v) != 1 {
			return it, fmt.Errorf("item %s/%s: attribute %q is not a string, a whole number, a binary or a boolean value, which a stored item can hold", it.PK, it.SK, name)
		}
		switch {
		case v.S != nil:
			it.Attrs[name] = *v.S
		case v.N != nil:
			n, err := strconv.ParseInt(*v.N, 10, 64)
			if err != nil {
				return it, fmt.Errorf("item %s/%s: attribute %q is not an int64: %w", it.PK, it.SK, name, err)
			}
			it.Attrs[name] = n
		case v.BOOL != nil:
			it.Attrs[name] = *v.BOOL
		case v.B != nil:
			b := *v.B
			if b == nil {
				b = []byte{}
			}
			it.Attrs[name] = b
		}
	}
	return it, nil
}

// kinds counts the types v has set: one for a value of a type a
// [store.Item] holds, none for any other type.
func kinds(v value) int {
	n := 0
	if v.S != nil {
		n++
	}
	if v.N != nil {
		n++
	}
	if v.B != nil {
		n++
	}
	if v.BOOL != nil {
		n++
	}
	return n
}

// Package dynamo is the [store.Table] backend on Amazon DynamoDB
// (aws-sdk-go-v2). Every item lives in one table keyed by the string
// attributes pk (partition key) and sk (sort key); an item's expiry is the
// Number attribute expires_at, in epoch seconds, which the table's TTL sweeper
// removes. The sweeper runs up to days late (and never on DynamoDB Local), so
// reads, queries and conditions treat an expired item as absent themselves.
//
// A Lambda builds the client once at cold start and shares the Table:
//
//	awsCfg, err := config.LoadDefaultConfig(ctx)
//	if err != nil {
//		return err
//	}
//	tbl := dynamo.New(dynamodb.NewFromConfig(awsCfg), cfg.Table) // cfg.Table from the function's Config
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
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/switchboard-dev/switchboard/shared/store"
)

var _ store.Table = (*Table)(nil)

// Table is a [store.Table] in one DynamoDB table. Its methods are safe for use
// by multiple goroutines, as the DynamoDB client is.
type Table struct {
	client *dynamodb.Client
	name   string
	now    func() time.Time
}

// New returns a Table that stores items in the DynamoDB table name through
// client. It does no I/O: a missing table shows up as an error from the first call.
func New(client *dynamodb.Client, name string) *Table {
	return &Table{client: client, name: name, now: time.Now}
}

// Get implements [store.Table]. It reads with strong consistency, so it sees
// every write that returned before it.
func (t *Table) Get(ctx context.Context, pk, sk string) (store.Item, error) {
	if err := store.ValidateKey(pk, sk); err != nil {
		return store.Item{}, fmt.Errorf("dynamo: get %s/%s: %w", pk, sk, err)
	}
	out, err := t.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(t.name),
		Key:            itemKey(pk, sk),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
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
	_, err = t.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                 aws.String(t.name),
		Item:                      marshalItem(it),
		ConditionExpression:       cond.expr,
		ExpressionAttributeNames:  cond.names,
		ExpressionAttributeValues: cond.values,
	})
	if err != nil {
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
	_, err = t.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:                 aws.String(t.name),
		Key:                       itemKey(pk, sk),
		ConditionExpression:       cond.expr,
		ExpressionAttributeNames:  cond.names,
		ExpressionAttributeValues: cond.values,
	})
	if err != nil {
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
	items := make([]types.TransactWriteItem, 0, len(writes))
	// index[i] is the position in writes of items[i], to name the write that
	// a cancellation reason points at.
	index := make([]int, 0, len(writes))
	for i, w := range writes {
		cond, ok := condition(w.If, now)
		if !ok {
			return fmt.Errorf("dynamo: transact: write %d %s: %w", i, desc(w.Item.PK, w.Item.SK, w.If), store.ErrConditionFailed)
		}
		var ti types.TransactWriteItem
		switch w.Kind {
		case store.WritePut:
			ti.Put = &types.Put{
				TableName:                 aws.String(t.name),
				Item:                      marshalItem(w.Item),
				ConditionExpression:       cond.expr,
				ExpressionAttributeNames:  cond.names,
				ExpressionAttributeValues: cond.values,
			}
		case store.WriteDelete:
			ti.Delete = &types.Delete{
				TableName:                 aws.String(t.name),
				Key:                       itemKey(w.Item.PK, w.Item.SK),
				ConditionExpression:       cond.expr,
				ExpressionAttributeNames:  cond.names,
				ExpressionAttributeValues: cond.values,
			}
		case store.WriteCheck:
			if cond.expr == nil {
				continue
			}
			ti.ConditionCheck = &types.ConditionCheck{
				TableName:                 aws.String(t.name),
				Key:                       itemKey(w.Item.PK, w.Item.SK),
				ConditionExpression:       cond.expr,
				ExpressionAttributeNames:  cond.names,
				ExpressionAttributeValues: cond.values,
			}
		}
		items = append(items, ti)
		index = append(index, i)
	}
	if len(items) == 0 {
		return nil // only checks that always hold
	}
	// The SDK fills ClientRequestToken, so its own retries of a transaction
	// that did commit are answered from DynamoDB's idempotency window
	// instead of being applied twice.
	_, err = t.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	if err == nil {
		return nil
	}
	var canceled *types.TransactionCanceledException
	if errors.As(err, &canceled) {
		// Reasons are in the order of TransactItems; a condition that did not
		// hold is the definite answer, so it wins over a conflict elsewhere.
		for _, want := range []string{"ConditionalCheckFailed", "TransactionConflict"} {
			for j, r := range canceled.CancellationReasons {
				if aws.ToString(r.Code) != want || j >= len(index) {
					continue
				}
				w := writes[index[j]]
				return fmt.Errorf("dynamo: transact: write %d %s: %w", index[j], desc(w.Item.PK, w.Item.SK, w.If), mapError(err))
			}
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
	values := map[string]types.AttributeValue{
		":pk":  &types.AttributeValueMemberS{Value: pk},
		":now": number(t.now().Unix()),
	}
	keyCond := "#pk = :pk"
	switch {
	case q.Prefix != "":
		keyCond += " AND begins_with(#sk, :prefix)"
		values[":prefix"] = &types.AttributeValueMemberS{Value: q.Prefix}
	case q.From != "" && q.To != "":
		keyCond += " AND #sk BETWEEN :from AND :to"
		values[":from"] = &types.AttributeValueMemberS{Value: q.From}
		values[":to"] = &types.AttributeValueMemberS{Value: q.To}
	case q.From != "":
		keyCond += " AND #sk >= :from"
		values[":from"] = &types.AttributeValueMemberS{Value: q.From}
	case q.To != "":
		keyCond += " AND #sk <= :to"
		values[":to"] = &types.AttributeValueMemberS{Value: q.To}
	}
	if q.Prefix != "" || q.From != "" || q.To != "" {
		names["#sk"] = store.AttrSK
	}
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(t.name),
		KeyConditionExpression:    aws.String(keyCond),
		FilterExpression:          aws.String("attribute_not_exists(#exp) OR #exp > :now"),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
		ScanIndexForward:          aws.Bool(!q.Reverse),
		ConsistentRead:            aws.Bool(true),
	}
	if after != "" {
		in.ExclusiveStartKey = itemKey(pk, after)
	}
	var items []store.Item
	for len(items) <= q.Limit {
		in.Limit = aws.Int32(int32(q.Limit + 1 - len(items)))
		out, err := t.client.Query(ctx, in)
		if err != nil {
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

// expr is a condition expression with the names and values it uses; a nil
// expr always holds.
type expr struct {
	expr   *string
	names  map[string]string
	values map[string]types.AttributeValue
}

// condition translates c into a DynamoDB condition expression that holds
// exactly when c.Holds would, treating an item whose expires_at is not after
// now as absent. It reports false for a condition that can never hold
// (see [store.Condition.Holds]): an equality on a key or TTL attribute, which
// are not among an item's Attrs, or with a value of no attribute type.
func condition(c store.Condition, now time.Time) (expr, bool) {
	kind, name, value := c.Kind()
	live := "attribute_exists(#pk) AND (attribute_not_exists(#exp) OR #exp > :now)"
	e := expr{
		names:  map[string]string{"#pk": store.AttrPK, "#exp": store.AttrExpiresAt},
		values: map[string]types.AttributeValue{":now": number(now.Unix())},
	}
	switch kind {
	case "absent":
		e.expr = aws.String("attribute_not_exists(#pk) OR #exp <= :now")
	case "exists":
		e.expr = aws.String(live)
	case "equals":
		switch name {
		case "", store.AttrPK, store.AttrSK, store.AttrExpiresAt:
			return expr{}, false
		}
		v, ok := marshalValue(value)
		if !ok {
			return expr{}, false
		}
		// DynamoDB's = is false between values of different types, so a
		// string "1" does not equal the number 1, as in store.Condition.Holds.
		e.expr = aws.String(live + " AND #a = :v")
		e.names["#a"] = name
		e.values[":v"] = v
	default:
		return expr{}, true
	}
	return e, true
}

// mapError maps DynamoDB's lost-race errors to [store.ErrConditionFailed]
// and [store.ErrConflict], keeping err in the chain for its details.
func mapError(err error) error {
	var (
		ccf        *types.ConditionalCheckFailedException
		canceled   *types.TransactionCanceledException
		conflict   *types.TransactionConflictException
		inProgress *types.TransactionInProgressException
	)
	switch {
	case errors.As(err, &ccf):
		return fmt.Errorf("%w: %w", store.ErrConditionFailed, err)
	case errors.As(err, &canceled):
		for _, r := range canceled.CancellationReasons {
			if aws.ToString(r.Code) == "ConditionalCheckFailed" {
				return fmt.Errorf("%w: %w", store.ErrConditionFailed, err)
			}
		}
		for _, r := range canceled.CancellationReasons {
			if aws.ToString(r.Code) == "TransactionConflict" {
				return fmt.Errorf("%w: %w", store.ErrConflict, err)
			}
		}
	case errors.As(err, &conflict), errors.As(err, &inProgress):
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

func itemKey(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		store.AttrPK: &types.AttributeValueMemberS{Value: pk},
		store.AttrSK: &types.AttributeValueMemberS{Value: sk},
	}
}

func number(n int64) *types.AttributeValueMemberN {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

// marshalItem returns the attribute values of it, which [store.ValidateItem]
// has checked.
func marshalItem(it store.Item) map[string]types.AttributeValue {
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
func marshalValue(v any) (types.AttributeValue, bool) {
	switch v := v.(type) {
	case string:
		return &types.AttributeValueMemberS{Value: v}, true
	case int64:
		return number(v), true
	case int:
		return number(int64(v)), true
	case bool:
		return &types.AttributeValueMemberBOOL{Value: v}, true
	case []byte:
		if v == nil {
			v = []byte{} // an empty binary value, not a missing one
		}
		return &types.AttributeValueMemberB{Value: v}, true
	}
	return nil, false
}

// unmarshalItem returns the item av holds. It fails on attribute types a
// [store.Item] cannot hold, which only a writer other than this package can
// have put there.
func unmarshalItem(av map[string]types.AttributeValue) (store.Item, error) {
	var it store.Item
	pk, ok := av[store.AttrPK].(*types.AttributeValueMemberS)
	if !ok {
		return it, fmt.Errorf("item has no string attribute %q", store.AttrPK)
	}
	sk, ok := av[store.AttrSK].(*types.AttributeValueMemberS)
	if !ok {
		return it, fmt.Errorf("item %s has no string attribute %q", pk.Value, store.AttrSK)
	}
	it.PK, it.SK = pk.Value, sk.Value
	it.Attrs = make(store.Attrs, len(av))
	for name, v := range av {
		switch name {
		case store.AttrPK, store.AttrSK:
			continue
		case store.AttrExpiresAt:
			n, ok := v.(*types.AttributeValueMemberN)
			if !ok {
				return it, fmt.Errorf("item %s/%s: attribute %q is not a number", it.PK, it.SK, name)
			}
			sec, err := strconv.ParseInt(n.Value, 10, 64)
			if err != nil {
				return it, fmt.Errorf("item %s/%s: attribute %q: %w", it.PK, it.SK, name, err)
			}
			it.ExpiresAt = time.Unix(sec, 0)
			continue
		}
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			it.Attrs[name] = v.Value
		case *types.AttributeValueMemberN:
			n, err := strconv.ParseInt(v.Value, 10, 64)
			if err != nil {
				return it, fmt.Errorf("item %s/%s: attribute %q is not an int64: %w", it.PK, it.SK, name, err)
			}
			it.Attrs[name] = n
		case *types.AttributeValueMemberBOOL:
			it.Attrs[name] = v.Value
		case *types.AttributeValueMemberB:
			b := v.Value
			if b == nil {
				b = []byte{}
			}
			it.Attrs[name] = b
		default:
			return it, fmt.Errorf("item %s/%s: attribute %q has type %T, which a store.Item cannot hold", it.PK, it.SK, name, v)
		}
	}
	return it, nil
}

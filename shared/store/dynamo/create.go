package dynamo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/switchboard-dev/switchboard/shared/awsjson"
	"github.com/switchboard-dev/switchboard/shared/store"
)

// maxCreateWait bounds how long [CreateTable] waits for a table to become
// ACTIVE when ctx has no deadline.
const maxCreateWait = 5 * time.Minute

// maxPoll bounds the wait between two DescribeTable calls of [CreateTable]:
// DynamoDB Local creates a table at once, DynamoDB in seconds.
const maxPoll = 5 * time.Second

// maxTableAnswer bounds the answer of a table's control calls, which
// describe its keys, indexes and settings.
const maxTableAnswer = 1 << 20

// keyElement is one attribute of a table's key schema.
type keyElement struct{ AttributeName, KeyType string }

// CreateTable creates the DynamoDB table name with the layout [Table] uses:
// string attributes pk (HASH) and sk (RANGE), on-demand billing, and TTL on
// expires_at, calling DynamoDB as cfg configures it. It waits until the
// table is ACTIVE. A table that already exists with that key schema is not
// an error, so CreateTable is idempotent; one with another key schema is.
//
// It is for tests and local development against DynamoDB Local: the deployed
// table comes from the SAM template, with the same names.
func CreateTable(ctx context.Context, cfg aws.Config, name string) error {
	t := New(cfg, name)
	type attrDef struct{ AttributeName, AttributeType string }
	in := struct {
		TableName            string
		AttributeDefinitions []attrDef
		KeySchema            []keyElement
		BillingMode          string
	}{
		TableName:            name,
		AttributeDefinitions: []attrDef{{store.AttrPK, "S"}, {store.AttrSK, "S"}},
		KeySchema:            []keyElement{{store.AttrPK, "HASH"}, {store.AttrSK, "RANGE"}},
		BillingMode:          "PAY_PER_REQUEST",
	}
	if err := t.call(ctx, "CreateTable", in, nil, maxTableAnswer); err != nil && !awsjson.IsCode(err, "ResourceInUseException") {
		return fmt.Errorf("dynamo: create table %s: %w", name, err)
	}
	keys, err := t.waitActive(ctx)
	if err != nil {
		return fmt.Errorf("dynamo: create table %s: waiting for it to become active: %w", name, err)
	}
	if err := checkKeySchema(keys); err != nil {
		return fmt.Errorf("dynamo: create table %s: %w", name, err)
	}

	var ttl struct {
		TimeToLiveDescription struct{ TimeToLiveStatus, AttributeName string }
	}
	if err := t.call(ctx, "DescribeTimeToLive", struct{ TableName string }{name}, &ttl, maxTableAnswer); err != nil {
		return fmt.Errorf("dynamo: create table %s: describe TTL: %w", name, err)
	}
	switch d := ttl.TimeToLiveDescription; d.TimeToLiveStatus {
	case "ENABLED", "ENABLING":
		if d.AttributeName != store.AttrExpiresAt {
			return fmt.Errorf("dynamo: create table %s: TTL is on attribute %q, want %q", name, d.AttributeName, store.AttrExpiresAt)
		}
		return nil
	}
	type spec struct {
		AttributeName string
		Enabled       bool
	}
	update := struct {
		TableName               string
		TimeToLiveSpecification spec
	}{name, spec{store.AttrExpiresAt, true}}
	if err := t.call(ctx, "UpdateTimeToLive", update, nil, maxTableAnswer); err != nil {
		return fmt.Errorf("dynamo: create table %s: enable TTL on %s: %w", name, store.AttrExpiresAt, err)
	}
	return nil
}

// waitActive calls DescribeTable until the table is ACTIVE, waiting twice
// as long each time up to [maxPoll], and returns its key schema. A table
// not found yet is waited for, as DynamoDB may answer so just after
// CreateTable. It gives up when ctx ends or, if ctx has no deadline, after
// [maxCreateWait].
func (t *Table) waitActive(ctx context.Context) ([]keyElement, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, maxCreateWait)
		defer cancel()
	}
	for poll := 100 * time.Millisecond; ; poll = min(2*poll, maxPoll) {
		var out struct {
			Table struct {
				TableStatus string
				KeySchema   []keyElement
			}
		}
		err := t.call(ctx, "DescribeTable", struct{ TableName string }{t.name}, &out, maxTableAnswer)
		switch {
		case err == nil && out.Table.TableStatus == "ACTIVE":
			return out.Table.KeySchema, nil
		case err != nil && !awsjson.IsCode(err, "ResourceNotFoundException"):
			return nil, err
		}
		wait := time.NewTimer(poll)
		select {
		case <-wait.C:
		case <-ctx.Done():
			wait.Stop()
			if err == nil {
				err = fmt.Errorf("the table is %s", out.Table.TableStatus)
			}
			return nil, fmt.Errorf("%w (after %w)", ctx.Err(), err)
		}
	}
}

// DeleteTable deletes the DynamoDB table name, calling DynamoDB as cfg
// configures it; it does not wait for the table to be gone. It is for the
// tests and benchmarks that made the table with [CreateTable].
func DeleteTable(ctx context.Context, cfg aws.Config, name string) error {
	if err := New(cfg, name).call(ctx, "DeleteTable", struct{ TableName string }{name}, nil, maxTableAnswer); err != nil {
		return fmt.Errorf("dynamo: delete table %s: %w", name, err)
	}
	return nil
}

// checkKeySchema reports an error unless keys are pk (HASH) and sk (RANGE).
func checkKeySchema(keys []keyElement) error {
	if len(keys) == 0 {
		return errors.New("DescribeTable returned no key schema")
	}
	var hash, rng string
	for _, k := range keys {
		switch k.KeyType {
		case "HASH":
			hash = k.AttributeName
		case "RANGE":
			rng = k.AttributeName
		}
	}
	if hash != store.AttrPK || rng != store.AttrSK {
		return fmt.Errorf("table is keyed by (%q, %q), want (%q, %q)", hash, rng, store.AttrPK, store.AttrSK)
	}
	return nil
}

package dynamo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/switchboard-dev/switchboard/shared/store"
)

// maxCreateWait bounds how long [CreateTable] waits for a table to become
// ACTIVE when ctx has no deadline.
const maxCreateWait = 5 * time.Minute

// CreateTable creates the DynamoDB table name with the layout [Table] uses:
// string attributes pk (HASH) and sk (RANGE), on-demand billing, and TTL on
// expires_at. It waits until the table is ACTIVE. A table that already exists
// with that key schema is not an error, so CreateTable is idempotent; one with
// another key schema is.
//
// It is for tests and local development against DynamoDB Local: the deployed
// table comes from the SAM template, with the same names.
func CreateTable(ctx context.Context, client *dynamodb.Client, name string) error {
	_, err := client.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName: aws.String(name),
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String(store.AttrPK), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String(store.AttrSK), AttributeType: types.ScalarAttributeTypeS},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(store.AttrPK), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(store.AttrSK), KeyType: types.KeyTypeRange},
		},
		BillingMode: types.BillingModePayPerRequest,
	})
	var inUse *types.ResourceInUseException
	if err != nil && !errors.As(err, &inUse) {
		return fmt.Errorf("dynamo: create table %s: %w", name, err)
	}
	wait := maxCreateWait
	if d, ok := ctx.Deadline(); ok {
		wait = max(time.Until(d), time.Millisecond)
	}
	out, err := dynamodb.NewTableExistsWaiter(client).WaitForOutput(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, wait)
	if err != nil {
		return fmt.Errorf("dynamo: create table %s: waiting for it to become active: %w", name, err)
	}
	if err := checkKeySchema(out.Table); err != nil {
		return fmt.Errorf("dynamo: create table %s: %w", name, err)
	}

	ttl, err := client.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(name)})
	if err != nil {
		return fmt.Errorf("dynamo: create table %s: describe TTL: %w", name, err)
	}
	if d := ttl.TimeToLiveDescription; d != nil {
		switch d.TimeToLiveStatus {
		case types.TimeToLiveStatusEnabled, types.TimeToLiveStatusEnabling:
			if aws.ToString(d.AttributeName) != store.AttrExpiresAt {
				return fmt.Errorf("dynamo: create table %s: TTL is on attribute %q, want %q", name, aws.ToString(d.AttributeName), store.AttrExpiresAt)
			}
			return nil
		}
	}
	_, err = client.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName: aws.String(name),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{
			AttributeName: aws.String(store.AttrExpiresAt),
			Enabled:       aws.Bool(true),
		},
	})
	if err != nil {
		return fmt.Errorf("dynamo: create table %s: enable TTL on %s: %w", name, store.AttrExpiresAt, err)
	}
	return nil
}

// checkKeySchema reports an error unless d's key schema is pk (HASH) and sk (RANGE).
func checkKeySchema(d *types.TableDescription) error {
	if d == nil {
		return errors.New("DescribeTable returned no table")
	}
	var hash, rng string
	for _, k := range d.KeySchema {
		switch k.KeyType {
		case types.KeyTypeHash:
			hash = aws.ToString(k.AttributeName)
		case types.KeyTypeRange:
			rng = aws.ToString(k.AttributeName)
		}
	}
	if hash != store.AttrPK || rng != store.AttrSK {
		return fmt.Errorf("table is keyed by (%q, %q), want (%q, %q)", hash, rng, store.AttrPK, store.AttrSK)
	}
	return nil
}

package dynamo_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/dynamo"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
)

func TestCreateTableIsIdempotent(t *testing.T) {
	client := storetest.DynamoClient(t)
	ctx := context.Background()
	name := storetest.DynamoTable(t) + "-create"
	t.Cleanup(func() {
		if _, err := client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)}); err != nil {
			t.Errorf("deleting %s: %v", name, err)
		}
	})
	for i := 0; i < 2; i++ {
		if err := dynamo.CreateTable(ctx, client, name); err != nil {
			t.Fatalf("CreateTable #%d: %v", i+1, err)
		}
	}
	ttl, err := client.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	if d := ttl.TimeToLiveDescription; d == nil || d.TimeToLiveStatus != types.TimeToLiveStatusEnabled || aws.ToString(d.AttributeName) != store.AttrExpiresAt {
		t.Errorf("TTL = %+v, want ENABLED on %s", d, store.AttrExpiresAt)
	}
}

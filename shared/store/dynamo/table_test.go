package dynamo_test

import (
	"context"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/awsjson"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/dynamo"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
)

func TestCreateTableIsIdempotent(t *testing.T) {
	cfg := storetest.DynamoConfig(t)
	ctx := context.Background()
	name := storetest.DynamoTable(t) + "-create"
	t.Cleanup(func() {
		if err := dynamo.DeleteTable(ctx, cfg, name); err != nil {
			t.Errorf("deleting %s: %v", name, err)
		}
	})
	for i := 0; i < 2; i++ {
		if err := dynamo.CreateTable(ctx, cfg, name); err != nil {
			t.Fatalf("CreateTable #%d: %v", i+1, err)
		}
	}
	var ttl struct {
		TimeToLiveDescription struct{ TimeToLiveStatus, AttributeName string }
	}
	if _, err := awsjson.Call(ctx, &cfg, awsjson.DynamoDB, "DescribeTimeToLive", map[string]string{"TableName": name}, &ttl, 1<<20); err != nil {
		t.Fatal(err)
	}
	if d := ttl.TimeToLiveDescription; d.TimeToLiveStatus != "ENABLED" || d.AttributeName != store.AttrExpiresAt {
		t.Errorf("TTL = %+v, want ENABLED on %s", d, store.AttrExpiresAt)
	}
}

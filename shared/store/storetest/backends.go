package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/dynamo"
	"github.com/switchboard-dev/switchboard/shared/store/embedded"
)

// DynamoDBEnv names the environment variable that holds the endpoint URL of
// the DynamoDB Local the project's test command starts, such as
// http://127.0.0.1:8000. When it is unset the DynamoDB backend is skipped.
const DynamoDBEnv = "SWITCHBOARD_TEST_DYNAMODB"

// A TableBackend opens a [store.Table] for one test; the table is closed or
// cleaned up by the test's cleanup functions.
type TableBackend struct {
	Name string
	Open func(t *testing.T) store.Table
}

// TableBackends returns every Table backend this test run can reach. The
// embedded backend is always there; the others need the services the
// project's test command starts, and are reported as skipped, with that
// command, when their service is absent.
func TableBackends(t *testing.T) []TableBackend {
	t.Helper()
	backends := []TableBackend{{Name: "embedded", Open: OpenEmbedded}}
	if os.Getenv(DynamoDBEnv) == "" {
		t.Log("dynamo backend skipped: " + DynamoDBEnv + " is not set; run scripts/test to start DynamoDB Local")
	} else {
		backends = append(backends, TableBackend{Name: "dynamo", Open: OpenDynamo})
	}
	return backends
}

// EachTable runs fn once per backend in [TableBackends], each in its own subtest
// named after the backend.
func EachTable(t *testing.T, fn func(t *testing.T, tbl store.Table)) {
	t.Helper()
	for _, b := range TableBackends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Logf("table backend: %s", b.Name)
			fn(t, b.Open(t))
		})
	}
}

// OpenEmbedded opens an embedded table in a temporary folder.
func OpenEmbedded(t *testing.T) store.Table {
	t.Helper()
	tbl, err := embedded.Open(filepath.Join(t.TempDir(), "switchboard.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tbl.Close() })
	return tbl
}

// DynamoConfig returns the AWS configuration that reaches the DynamoDB Local
// at the endpoint in [DynamoDBEnv], with static credentials and region
// us-east-1 (DynamoDB Local accepts any). It skips t, naming the command that
// starts DynamoDB Local, when the variable is unset. It never reads the
// machine's AWS configuration, so a test cannot reach a real AWS account.
func DynamoConfig(t testing.TB) aws.Config {
	t.Helper()
	endpoint := os.Getenv(DynamoDBEnv)
	if endpoint == "" {
		t.Skip("skipped: " + DynamoDBEnv + " is not set; run scripts/test to start DynamoDB Local")
	}
	return aws.Config{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider("switchboard", "test", ""),
	}
}

// dynamoTable is the one DynamoDB table a test process creates, on first use,
// and shares between its tests; each test works under its own random
// partition keys. The table lives as long as DynamoDB Local (the test command
// runs it in memory), since nothing runs when a test process ends.
var dynamoTable struct {
	once sync.Once
	name string
	err  error
}

// DynamoTable returns the name of this test process's table in the DynamoDB
// Local at [DynamoDBEnv], creating it with [dynamo.CreateTable] on first use.
// It skips t when the variable is unset.
func DynamoTable(t testing.TB) string {
	t.Helper()
	cfg := DynamoConfig(t)
	dynamoTable.once.Do(func() {
		var b [6]byte
		if _, err := rand.Read(b[:]); err != nil {
			dynamoTable.err = err
			return
		}
		dynamoTable.name = "switchboard-test-" + hex.EncodeToString(b[:])
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		dynamoTable.err = dynamo.CreateTable(ctx, cfg, dynamoTable.name)
	})
	if dynamoTable.err != nil {
		t.Fatalf("creating the test table in DynamoDB Local at %s: %v", os.Getenv(DynamoDBEnv), dynamoTable.err)
	}
	return dynamoTable.name
}

// OpenDynamo opens the DynamoDB backend on this test process's table in the
// DynamoDB Local at [DynamoDBEnv]; it skips t when the variable is unset.
func OpenDynamo(t *testing.T) store.Table {
	t.Helper()
	name := DynamoTable(t)
	return dynamo.New(DynamoConfig(t), name)
}

package catalog

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestTriggersBecomeFunctionsThatServeNothing(t *testing.T) {
	tool := &Tool{
		Name: "t_ingest", Title: "t", Description: "d", Family: "test", Function: "test/ingest",
		InputSchema: objectSchema, OutputSchema: objectSchema, Visibility: Public,
		Limits: Limits{Timeout: time.Second, MemoryMB: 128}, Embeds: true, Pipeline: true,
	}
	base, err := New([]*Tool{tool}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	indexer := &Trigger{
		Function: "test/indexer", Family: "test", Description: "Indexes uploads.",
		Limits: Limits{Timeout: time.Minute, MemoryMB: 512}, Table: ReadWrite, Blobs: Read, Embeds: true,
		S3: &S3Events{Events: []string{"s3:ObjectCreated:*"}, Prefix: "tenants/"},
	}
	cat, err := base.WithTriggers(indexer)
	if err != nil {
		t.Fatal(err)
	}
	want := []Function{
		{Path: "test/indexer", Family: "test", Limits: indexer.Limits, Table: ReadWrite, Blobs: Read, Embeds: true, Trigger: indexer},
		{Path: "test/ingest", Family: "test", Limits: tool.Limits, Tools: []string{"t_ingest"}, Pipeline: true, Embeds: true, Public: true},
	}
	if diff := cmp.Diff(want, cat.Functions()); diff != "" {
		t.Errorf("functions mismatch (-want +got):\n%s", diff)
	}
	if cat.Timeout("test/indexer") != time.Minute || len(base.Functions()) != 1 {
		t.Errorf("the trigger's timeout is %v, or the base catalog changed", cat.Timeout("test/indexer"))
	}
	for _, bad := range []*Trigger{
		{Function: "test/ingest", Family: "test", Description: "d", Limits: indexer.Limits, S3: indexer.S3},
		{Function: "test/indexer", Family: "test", Description: "d", Limits: indexer.Limits},
		{Function: "test/x", Family: "test", Description: "d", S3: indexer.S3},
		{Function: "test/x", S3: indexer.S3, Limits: indexer.Limits},
	} {
		if _, err := base.WithTriggers(bad); err == nil || !strings.Contains(err.Error(), "trigger") {
			t.Errorf("WithTriggers(%+v): %v, want an error", bad, err)
		}
	}
	if _, err := cat.WithTriggers(indexer); err == nil {
		t.Errorf("adding the same trigger twice: no error")
	}
}

// objectSchema is the schema of the test tools, which take and return any object.
var objectSchema = json.RawMessage(`{"type":"object"}`)

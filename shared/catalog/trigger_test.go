package catalog

import (
	"encoding/json"
	"fmt"
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
		{Function: "test/x", Family: "test", Description: "d", Limits: indexer.Limits, S3: indexer.S3, Schedule: "rate(5 minutes)"},
	} {
		if _, err := base.WithTriggers(bad); err == nil || !strings.Contains(err.Error(), "trigger") {
			t.Errorf("WithTriggers(%+v): %v, want an error", bad, err)
		}
	}
	if _, err := cat.WithTriggers(indexer); err == nil {
		t.Errorf("adding the same trigger twice: no error")
	}
}

func TestAScheduledTriggerIsAFunctionThatConnectsAndUsesTheKeyAsItSays(t *testing.T) {
	base, err := New(nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	sweep := &Trigger{Function: "test/sweep", Family: "test", Description: "Sweeps.", Limits: Limits{Timeout: time.Minute, MemoryMB: 128},
		Table: ReadWrite, Connects: true, KeyUse: KeyOpen, Schedule: "rate(5 minutes)"}
	cat, err := base.WithTriggers(sweep)
	if err != nil {
		t.Fatal(err)
	}
	want := []Function{{Path: "test/sweep", Family: "test", Limits: sweep.Limits, Table: ReadWrite, Connects: true, Opens: true, Trigger: sweep}}
	if diff := cmp.Diff(want, cat.Functions()); diff != "" {
		t.Errorf("functions mismatch (-want +got):\n%s", diff)
	}
}

// objectSchema is the schema of the test tools, which take and return any object.
var objectSchema = json.RawMessage(`{"type":"object"}`)

func TestAFunctionSealsOrOpensIfAnyOfItsConnectingToolsDoes(t *testing.T) {
	tool := func(name, fn string, connects bool, use KeyUse) *Tool {
		return &Tool{Name: name, Title: "t", Description: "d", Family: "test", Function: fn, InputSchema: objectSchema, OutputSchema: objectSchema,
			Visibility: Public, Limits: Limits{Timeout: time.Second, MemoryMB: 128}, Connects: connects, KeyUse: use}
	}
	cat, err := New([]*Tool{
		tool("a_seal", "test/a", true, KeySeal), tool("a_none", "test/a", true, KeyNone),
		tool("b_open", "test/b", true, KeyOpen), tool("b_none", "test/b", true, KeyNone),
		tool("c_default", "test/c", true, KeySealOpen),
		tool("d_none", "test/d", true, KeyNone),
		tool("e_not_connecting", "test/e", false, KeySealOpen),
	}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]bool{"test/a": {true, false}, "test/b": {false, true}, "test/c": {true, true}, "test/d": {}, "test/e": {}}
	for _, f := range cat.Functions() {
		if got := [2]bool{f.Seals, f.Opens}; got != want[f.Path] {
			t.Errorf("%s seals, opens = %v, want %v", f.Path, got, want[f.Path])
		}
	}
}

func TestTheConnectorSyncScheduleRunsEveryConnectorSyncPeriod(t *testing.T) {
	if want := fmt.Sprintf("rate(%d minutes)", int(ConnectorSyncPeriod/time.Minute)); ConnectorSyncSchedule != want || ConnectorSyncPeriod%time.Minute != 0 {
		t.Errorf("ConnectorSyncSchedule = %q, ConnectorSyncPeriod = %v; want the schedule %q, the period in whole minutes", ConnectorSyncSchedule, ConnectorSyncPeriod, want)
	}
}

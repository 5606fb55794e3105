package deploy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/connector"
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/local"
	"github.com/switchboard-dev/switchboard/shared/netguard"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
	"github.com/switchboard-dev/switchboard/shared/vector"
)

// Seed prepares table and blobs so that every sample event succeeds: it
// replays the events of memory_get_or_create and memory_add_message, so that
// the sample conversation exists with a message and the sample trace has
// audit events; and it creates the sample vector store, replays
// vector_document_ingest into it, and puts its shard where the search
// worker's example names it. The functions run in process (package local).
// It registers the sample connector at [SampleConnectorHost], which no
// sample event can reach: connector_verify's and connector_sync's events
// answer that the upstream is unavailable.
func Seed(ctx context.Context, table store.Table, blobs store.Blobs) error {
	cat := catalog.Default()
	s, err := local.New(local.Options{Deps: lambdafn.Deps{Table: table, Blobs: blobs}, Functions: handlers.All()})
	if err != nil {
		return err
	}
	sample := tenant.Caller{Tenant: SampleTenant, Principal: SamplePrincipal}
	if _, err := vector.New(table, blobs, nil, nil).CreateStore(ctx, sample, vector.CreateStoreInput{Alias: "manuals"}); err != nil {
		return fmt.Errorf("deploy: seeding the sample vector store: %w", err)
	}
	guard := &netguard.Policy{AllowedHosts: []string{SampleConnectorHost}}
	conns := connector.New(table, nil, &connector.Options{CheckURL: guard.CheckURL, HTTPClient: guard.Client(0)})
	defer conns.Close()
	if _, err := conns.Create(ctx, sample, connector.CreateInput{Name: SampleConnector, BaseURL: "https://" + SampleConnectorHost + "/mcp",
		Transport: connector.TransportStreamable}); err != nil {
		return fmt.Errorf("deploy: seeding the sample connector: %w", err)
	}
	evs, err := Events(cat)
	if err != nil {
		return err
	}
	for _, path := range []string{EventsDir + "/memory/get_or_create.json", EventsDir + "/memory/add_message.json", EventsDir + "/vector/document_ingest.json"} {
		if err := replay(ctx, s, evs, path); err != nil {
			return fmt.Errorf("deploy: seeding with %s: %w", path, err)
		}
	}
	return seedShard(ctx, cat, blobs)
}

// replay invokes the sample event at path through s and checks it succeeded.
func replay(ctx context.Context, s *local.Stack, evs []Event, path string) error {
	for _, ev := range evs {
		if ev.Path != path {
			continue
		}
		var req invoke.Request
		if err := json.Unmarshal(ev.Payload, &req); err != nil {
			return err
		}
		resp, err := s.Invoke(ctx, ev.Function, &req)
		if err != nil {
			return err
		}
		if resp.Error != nil {
			return errors.New(resp.Error.Message)
		}
		return nil
	}
	return fmt.Errorf("no sample event %s", path)
}

// seedShard copies the sample store's one shard to the key the search
// worker's example names: shard keys are random, an example's fixed.
func seedShard(ctx context.Context, cat *catalog.Catalog, blobs store.Blobs) error {
	worker, _ := cat.Tool("optimizer_vs-search-group")
	var in vector.SearchGroupInput
	if err := json.Unmarshal(worker.Example, &in); err != nil {
		return err
	}
	page, err := blobs.List(ctx, tenant.BlobPrefix(SampleTenant)+"vector/manuals/shards/", nil)
	if err != nil || len(page.Blobs) != 1 {
		return fmt.Errorf("deploy: the sample store's shards: %v, %v; want one", page.Blobs, err)
	}
	rc, _, err := blobs.Get(ctx, page.Blobs[0].Key, nil)
	if err != nil {
		return err
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		return err
	}
	for _, sh := range in.Group.Shards {
		if _, err := blobs.Put(ctx, sh.Key, data, nil); err != nil {
			return err
		}
	}
	return nil
}

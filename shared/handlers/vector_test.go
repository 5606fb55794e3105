package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/handlers/vectorfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/metrics"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
	"github.com/switchboard-dev/switchboard/shared/vector"
)

// TestVectorIndexerIngestsAnUpload invokes the indexer through Lambda's JSON
// path with an S3 notification in the shape S3 sends (keys URL-encoded).
func TestVectorIndexerIngestsAnUpload(t *testing.T) {
	ctx := context.Background()
	var records bytes.Buffer
	d := lambdafn.Deps{Table: storetest.OpenEmbedded(t), Blobs: storetest.OpenLocalFS(t), Metrics: metrics.New(&records)}
	if _, err := d.Blobs.Put(ctx, "tenants/acme/documents/manuals/getting started.md", []byte("# Getting started\n\nInstall the agent, then run it with your API key."), nil); err != nil {
		t.Fatal(err)
	}
	payload, err := os.ReadFile(filepath.Join("testdata", "s3-object-created.json"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := vectorfn.Indexer.Build(d).Invoke(ctx, payload)
	if err != nil {
		t.Fatal(err)
	}
	var rep vector.IndexReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Ingested) != 1 || rep.Ingested[0].DocID != "getting started.md" || rep.Ingested[0].Store != "manuals" || len(rep.Skipped) != 1 {
		t.Fatalf("report %s; want the upload ingested and the shard skipped", out)
	}
	// Like every call, the indexer's invocation is a metric record of its family.
	for _, want := range []string{`"Family":"vector"`, `"Function":"vector/indexer"`, `"Calls":1`, `"Errors":0`} {
		if !strings.Contains(records.String(), want) {
			t.Errorf("metric record %q lacks %s", records.String(), want)
		}
	}
	res, err := vector.New(d.Table, d.Blobs, nil, nil).Retrieve(ctx, tenant.Caller{Tenant: "acme"}, vector.RetrieveInput{Question: "install the agent"})
	if err != nil || len(res.Documents) == 0 || res.Documents[0].DocID != "getting started.md" {
		t.Errorf("retrieve: %+v, %v", res, err)
	}
}

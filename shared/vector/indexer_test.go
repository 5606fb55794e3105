package vector_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/vector"
)

func s3Record(event, key string) events.S3EventRecord {
	var r events.S3EventRecord
	r.EventSource, r.EventName = "aws:s3", event
	r.S3.Bucket.Name = "switchboard-bucket"
	// S3 sends keys URL-encoded, spaces as '+'.
	r.S3.Object.Key = strings.ReplaceAll(url.PathEscape(key), "%2F", "/")
	r.S3.Object.Key = strings.ReplaceAll(r.S3.Object.Key, "%20", "+")
	return r
}

func TestParseUpload(t *testing.T) {
	for _, tc := range []struct {
		name, event, key string
		ok, err          bool
		want             vector.Upload
	}{
		{"an upload is ingested", "ObjectCreated:Put", "tenants/acme/documents/manuals/setup guide.md", true, false,
			vector.Upload{Key: "tenants/acme/documents/manuals/setup guide.md", Tenant: "acme", Store: "manuals", DocID: "setup guide.md"}},
		{"a nested key keeps its path as id", "ObjectCreated:CompleteMultipartUpload", "tenants/acme/documents/manuals/a/b.pdf", true, false,
			vector.Upload{Key: "tenants/acme/documents/manuals/a/b.pdf", Tenant: "acme", Store: "manuals", DocID: "a/b.pdf"}},
		{"a removal is a delete", "ObjectRemoved:Delete", "tenants/acme/documents/manuals/x.txt", true, false,
			vector.Upload{Key: "tenants/acme/documents/manuals/x.txt", Tenant: "acme", Store: "manuals", DocID: "x.txt", Removed: true}},
		{"a shard is ignored", "ObjectCreated:Put", "tenants/acme/vector/manuals/shards/1.seg", false, false, vector.Upload{}},
		{"a key outside tenants is ignored", "ObjectCreated:Put", "other/acme/documents/manuals/x.txt", false, false, vector.Upload{}},
		{"a folder marker is ignored", "ObjectCreated:Put", "tenants/acme/documents/manuals/", false, false, vector.Upload{}},
		{"another event is ignored", "ObjectRestore:Post", "tenants/acme/documents/manuals/x.txt", false, false, vector.Upload{}},
		{"a bad tenant is an error", "ObjectCreated:Put", "tenants/ACME/documents/manuals/x.txt", false, true, vector.Upload{}},
		{"a bad store is an error", "ObjectCreated:Put", "tenants/acme/documents/Big Store/x.txt", false, true, vector.Upload{}},
		{"a file right under documents is an error", "ObjectCreated:Put", "tenants/acme/documents/x.txt", false, true, vector.Upload{}},
		{"a climbing key is an error", "ObjectCreated:Put", "tenants/acme/documents/manuals/../../globex/x.txt", false, true, vector.Upload{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok, err := vector.ParseUpload(s3Record(tc.event, tc.key))
			if ok != tc.ok || (err != nil) != tc.err || got != tc.want {
				t.Errorf("got %+v, %v, %v; want %+v, %v, error %v", got, ok, err, tc.want, tc.ok, tc.err)
			}
		})
	}
}

func TestIndexIngestsAndRemovesUploads(t *testing.T) {
	ctx := context.Background()
	blobs := storetest.OpenLocalFS(t)
	svc := newService(t, storetest.OpenEmbedded(t), blobs, nil)
	put := func(key, body string) {
		if _, err := blobs.Put(ctx, key, []byte(body), nil); err != nil {
			t.Fatal(err)
		}
	}
	put("tenants/acme/documents/manuals/bread guide.md", docs["bread.md"])
	put("tenants/globex/documents/manuals/tides.md", docs["tides.md"])
	put("tenants/acme/documents/manuals/sheet.xls", "not a document")
	rep, err := svc.Index(ctx, events.S3Event{Records: []events.S3EventRecord{
		s3Record("ObjectCreated:Put", "tenants/acme/documents/manuals/bread guide.md"),
		s3Record("ObjectCreated:Put", "tenants/globex/documents/manuals/tides.md"),
		s3Record("ObjectCreated:Put", "tenants/acme/documents/manuals/sheet.xls"),
		s3Record("ObjectCreated:Put", "tenants/acme/vector/manuals/shards/x.seg"),
		s3Record("ObjectCreated:Put", "tenants/acme/documents/gone/deleted-since.md"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Ingested) != 2 || len(rep.Skipped) != 3 {
		t.Fatalf("report %+v; want 2 ingested, 3 skipped", rep)
	}
	if _, err := svc.GetStore(ctx, acme, vector.StoreInput{Alias: "gone"}); err == nil {
		t.Errorf("an event for an object deleted since created its store")
	}
	// Each upload went to its own tenant's store, created on the fly.
	if top := topDoc(t, svc, acme, vector.RetrieveInput{Question: "knead the dough", Stores: []string{"manuals"}}); top != "bread guide.md" {
		t.Errorf("acme: top %q", top)
	}
	out, _ := svc.Retrieve(ctx, acme, vector.RetrieveInput{Question: "moon tides", Stores: []string{"manuals"}})
	for _, d := range out.Documents {
		if d.DocID == "tides.md" {
			t.Errorf("acme sees globex's upload")
		}
	}
	if top := topDoc(t, svc, globex, vector.RetrieveInput{Question: "moon tides"}); top != "tides.md" {
		t.Errorf("globex: top %q", top)
	}

	t.Run("an event delivered twice changes nothing", func(t *testing.T) {
		rep, err := svc.Index(ctx, events.S3Event{Records: []events.S3EventRecord{s3Record("ObjectCreated:Put", "tenants/acme/documents/manuals/bread guide.md")}})
		if err != nil || len(rep.Ingested) != 1 || rep.Ingested[0].Status != "unchanged" {
			t.Errorf("%+v, %v; want unchanged", rep, err)
		}
	})
	t.Run("a removal removes the document; one never indexed is skipped", func(t *testing.T) {
		rep, err := svc.Index(ctx, events.S3Event{Records: []events.S3EventRecord{
			s3Record("ObjectRemoved:Delete", "tenants/acme/documents/manuals/bread guide.md"),
			s3Record("ObjectRemoved:Delete", "tenants/acme/documents/manuals/never.md"),
		}})
		if err != nil || len(rep.Deleted) != 1 || len(rep.Skipped) != 1 {
			t.Fatalf("%+v, %v", rep, err)
		}
		st, _ := svc.GetStore(ctx, acme, vector.StoreInput{Alias: "manuals"})
		if st.Documents != 0 {
			t.Errorf("store %+v; want no documents", st)
		}
	})
}

package career_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"io"
	"os"
	"path"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/audit"
	"github.com/switchboard-dev/switchboard/shared/career"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
	"github.com/switchboard-dev/switchboard/shared/text"
)

// countingBlobs is a store.Blobs that counts what was read and written through it.
type countingBlobs struct {
	store.Blobs
	gets, heads, puts atomic.Int64
}

func (b *countingBlobs) Get(ctx context.Context, key string, opts *store.GetOptions) (io.ReadCloser, store.BlobInfo, error) {
	b.gets.Add(1)
	return b.Blobs.Get(ctx, key, opts)
}

func (b *countingBlobs) Head(ctx context.Context, key string) (store.BlobInfo, error) {
	b.heads.Add(1)
	return b.Blobs.Head(ctx, key)
}

func (b *countingBlobs) Put(ctx context.Context, key string, data []byte, opts *store.PutOptions) (store.BlobInfo, error) {
	b.puts.Add(1)
	return b.Blobs.Put(ctx, key, data, opts)
}

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func TestResumes(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		storetest.EachBlobs(t, func(t *testing.T, blobs store.Blobs) {
			for _, tc := range []struct {
				name string
				fn   func(t *testing.T, tbl store.Table, blobs store.Blobs)
			}{
				{"IngestExtractsAtomsAndStoresTheResume", testIngest},
				{"KeysOutsideTheTenantAreRefusedBeforeAnyRead", testForeignKeys},
				{"UnreadableFilesStoreNothing", testUnreadable},
			} {
				t.Run(tc.name, func(t *testing.T) { tc.fn(t, tbl, blobs) })
			}
		})
	})
}

func testIngest(t *testing.T, tbl store.Table, blobs store.Blobs) {
	ctx := context.Background()
	svc, c := career.New(tbl, blobs, nil), newCaller(t, tbl)
	md := readFixture(t, "dana-lee.md")
	trace := audit.NewTraceID()
	out, err := svc.IngestResume(ctx, c, career.IngestResumeInput{FileName: "dana-lee.md", ContentBase64: b64(md), TraceID: trace})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.ResumeHash, "sha256:") || len(out.ResumeHash) != 7+64 || len(out.SourceHash) != 16 || !out.Persisted || out.TraceID != trace {
		t.Errorf("IngestResume = %+v", out)
	}
	var got []string
	for _, a := range out.Atoms {
		got = append(got, a.Section+" | "+a.Text)
	}
	want := []string{
		"Dana Lee > Experience > Staff Engineer, Acme Payments (2021-2025) | Cut p99 latency of the payments API by 40% by moving it to AWS Lambda and DynamoDB.",
		"Dana Lee > Experience > Staff Engineer, Acme Payments (2021-2025) | Led a team of five engineers through a zero-downtime migration of the ledger.",
		"Dana Lee > Experience > Staff Engineer, Acme Payments (2021-2025) | Designed the single-table DynamoDB data model for the card authorisation service.",
		"Dana Lee > Experience > Software Engineer, Initech (2017-2021) | Built the Go billing service that invoices 2 million customers a month.",
		"Dana Lee > Experience > Software Engineer, Initech (2017-2021) | Introduced contract tests between services.",
		"Dana Lee > Skills | Go, Python, Terraform, AWS Lambda, DynamoDB",
		"Dana Lee > Skills | Mentoring engineers and running design reviews",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("atoms mismatch (-want +got):\n%s", diff)
	}
	// Stored: the canonical Markdown, the original, the record and the atoms.
	r, _, err := blobs.Get(ctx, out.ObjectKey, nil)
	if err != nil {
		t.Fatalf("reading %s: %v", out.ObjectKey, err)
	}
	stored, _ := io.ReadAll(r)
	r.Close()
	if !strings.HasPrefix(out.ObjectKey, tenant.BlobPrefix(c.Tenant)+"resumes/") || !strings.Contains(string(stored), "## Experience") {
		t.Errorf("canonical object %s holds %q", out.ObjectKey, stored)
	}
	list, err := svc.ListAtoms(ctx, c, career.AtomListInput{ResumeID: out.ResumeID})
	if err != nil || len(list.Atoms) != len(want) {
		t.Errorf("ListAtoms(resume) = %d atoms, %v; want %d", len(list.Atoms), err, len(want))
	}
	// The same content is the same resume, its atoms rewritten in place.
	again, err := svc.IngestResume(ctx, c, career.IngestResumeInput{FileName: "copy.md", ContentBase64: b64(md)})
	if err != nil || again.ResumeID != out.ResumeID || again.ResumeHash != out.ResumeHash || again.SourceHash != out.SourceHash {
		t.Errorf("re-ingesting = %+v, %v; want the same ids and hashes", again, err)
	}
	all, _ := svc.ListAtoms(ctx, c, career.AtomListInput{})
	if len(all.Atoms) != len(want) {
		t.Errorf("after re-ingesting there are %d atoms, want %d", len(all.Atoms), len(want))
	}
	// From a key under the tenant's prefix.
	key := tenant.BlobPrefix(c.Tenant) + "uploads/cv.txt"
	if _, err := blobs.Put(ctx, key, []byte("Experience\n\nPlain text resume.\n"), nil); err != nil {
		t.Fatal(err)
	}
	fromKey, err := svc.IngestResume(ctx, c, career.IngestResumeInput{S3Key: key})
	if err != nil || fromKey.Format != "text" || !fromKey.Persisted {
		t.Errorf("IngestResume(s3_key) = %+v, %v", fromKey, err)
	}
	// persist false extracts and stores nothing.
	dry, err := svc.IngestResume(ctx, c, career.IngestResumeInput{FileName: "other.md", ContentBase64: b64([]byte("## Skills\n- Rust\n")), Persist: new(bool)})
	if err != nil || dry.Persisted || len(dry.Atoms) != 1 {
		t.Fatalf("IngestResume(persist false) = %+v, %v", dry, err)
	}
	if got, _ := svc.GetAtoms(ctx, c, career.AtomGetInput{AtomIDs: []string{dry.Atoms[0].AtomID}}); len(got.Atoms) != 0 {
		t.Errorf("persist false stored atom %v", got.Atoms)
	}
	evs := events(t, tbl, c, trace)
	var types []string
	for _, e := range evs {
		types = append(types, e.Type)
	}
	if diff := cmp.Diff([]string{audit.IngestStarted, audit.IngestCompleted}, types); diff != "" {
		t.Errorf("audit trail mismatch (-want +got):\n%s", diff)
	}
}

func testForeignKeys(t *testing.T, tbl store.Table, blobs store.Blobs) {
	ctx := context.Background()
	cb := &countingBlobs{Blobs: blobs}
	svc, c := career.New(tbl, cb, nil), newCaller(t, tbl)
	other := "tenants/someone-else/resumes/cv.md"
	// Objects that exist under the refused keys: refusing must not depend on
	// a failed read.
	dotted := []string{tenant.BlobPrefix(c.Tenant) + "resumes/cv..md", tenant.BlobPrefix(c.Tenant) + "resumes/..cv.md", tenant.BlobPrefix(c.Tenant) + "resumes...md"}
	for _, key := range append([]string{other}, dotted...) {
		if _, err := blobs.Put(ctx, key, []byte("## Skills\n- secrets\n"), nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, key := range append([]string{
		other,
		tenant.BlobPrefix(c.Tenant) + "../someone-else/resumes/cv.md",
		tenant.BlobPrefix(c.Tenant) + "resumes/../../someone-else/resumes/cv.md",
		tenant.BlobPrefix(c.Tenant),
		"/" + tenant.BlobPrefix(c.Tenant) + "cv.md",
		"resumes/cv.md",
	}, dotted...) {
		_, err := svc.IngestResume(ctx, c, career.IngestResumeInput{S3Key: key})
		wantKind(t, err, fault.KindInvalid, "s3_key")
	}
	if n := cb.gets.Load() + cb.heads.Load() + cb.puts.Load(); n != 0 {
		t.Errorf("refused keys still caused %d object store calls", n)
	}
}

func testUnreadable(t *testing.T, tbl store.Table, blobs store.Blobs) {
	ctx := context.Background()
	cb := &countingBlobs{Blobs: blobs}
	svc, c := career.New(tbl, cb, nil), newCaller(t, tbl)
	for _, tc := range []struct {
		name  string
		in    career.IngestResumeInput
		field string
	}{
		{"UnsupportedExtension", career.IngestResumeInput{FileName: "cv.exe", ContentBase64: b64([]byte("MZ"))}, "file_name"},
		{"NoExtension", career.IngestResumeInput{FileName: "cv", ContentBase64: b64([]byte("text"))}, "file_name"},
		{"BinaryMarkdown", career.IngestResumeInput{FileName: "cv.md", ContentBase64: b64([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"))}, "content_base64"},
		{"CorruptPDF", career.IngestResumeInput{FileName: "cv.pdf", ContentBase64: b64([]byte("%PDF-1.7 not really"))}, "content_base64"},
		{"CorruptDOCX", career.IngestResumeInput{FileName: "cv.docx", ContentBase64: b64([]byte("PK not a zip"))}, "content_base64"},
		{"Empty", career.IngestResumeInput{FileName: "cv.md", ContentBase64: b64([]byte("\n\n  \n"))}, "content_base64"},
		{"NotBase64", career.IngestResumeInput{FileName: "cv.md", ContentBase64: "%%%"}, "content_base64"},
		{"NoFileName", career.IngestResumeInput{ContentBase64: b64([]byte("# x"))}, "file_name"},
		{"FileNameWithPath", career.IngestResumeInput{FileName: "../cv.md", ContentBase64: b64([]byte("# x"))}, "file_name"},
		{"Neither", career.IngestResumeInput{}, "s3_key"},
		{"Both", career.IngestResumeInput{S3Key: tenant.BlobPrefix(c.Tenant) + "cv.md", ContentBase64: b64([]byte("# x"))}, "s3_key"},
		{"BadTrace", career.IngestResumeInput{FileName: "cv.md", ContentBase64: b64([]byte("# x")), TraceID: "no spaces allowed"}, "trace_id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := svc.IngestResume(ctx, c, tc.in)
			wantKind(t, err, fault.KindInvalid, tc.field)
		})
	}
	if n := cb.puts.Load(); n != 0 {
		t.Errorf("rejected files caused %d object puts", n)
	}
	page, err := cb.List(ctx, tenant.BlobPrefix(c.Tenant), nil)
	if err != nil || len(page.Blobs) != 0 {
		t.Errorf("rejected files left objects %v (%v)", page.Blobs, err)
	}
	atoms, _ := svc.ListAtoms(ctx, c, career.AtomListInput{})
	if len(atoms.Atoms) != 0 {
		t.Errorf("rejected files left atoms %v", atoms.Atoms)
	}
}

// TestIngestReadsDOCXAndPDF ingests the same document as DOCX and as PDF (the
// fixtures of package document, made with LibreOffice): each is stored as
// canonical Markdown whose hashes the result reports.
func TestIngestReadsDOCXAndPDF(t *testing.T) {
	ctx := context.Background()
	tbl, blobs := storetest.OpenEmbedded(t), storetest.OpenLocalFS(t)
	svc, c := career.New(tbl, blobs, nil), tenant.Caller{Tenant: "acme", Principal: "alice"}
	for _, name := range []string{"report.docx", "report.pdf"} {
		t.Run(name, func(t *testing.T) {
			out, err := svc.IngestResume(ctx, c, career.IngestResumeInput{FileName: name, ContentBase64: b64(readFixture(t, name))})
			if err != nil {
				t.Fatal(err)
			}
			r, _, err := blobs.Get(ctx, out.ObjectKey, nil)
			if err != nil {
				t.Fatal(err)
			}
			md, _ := io.ReadAll(r)
			r.Close()
			sum := sha256.Sum256(md)
			if out.Format != strings.TrimPrefix(path.Ext(name), ".") || out.Title != "Retrieval Quality Report" ||
				out.ResumeHash != "sha256:"+hex.EncodeToString(sum[:]) || out.SourceHash != text.Hash64Hex(string(md)) ||
				!strings.Contains(string(md), "## Results") {
				t.Errorf("IngestResume(%s) = %+v; stored:\n%s", name, out, md)
			}
		})
	}
}

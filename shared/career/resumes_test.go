package career_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"sync"
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
				{"EveryFormatYieldsItsAtomsWithTheirSections", testFormats},
				{"ReingestingKeepsEditsAndVersions", testReingest},
				{"AFailedIngestionLeavesNothingARetryDoesNotFinish", testFailedIngest},
				{"ConcurrentIngestionsOfOneResumeAgree", testConcurrentIngest},
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
	// The atoms' texts and sections are testFormats' business.
	const atoms = 7
	if len(out.Atoms) != atoms {
		t.Errorf("IngestResume yields %d atoms, want %d", len(out.Atoms), atoms)
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
	if err != nil || len(list.Atoms) != atoms {
		t.Errorf("ListAtoms(resume) = %d atoms, %v; want %d", len(list.Atoms), err, atoms)
	}
	// The same content is the same resume, its atoms kept as stored.
	again, err := svc.IngestResume(ctx, c, career.IngestResumeInput{FileName: "copy.md", ContentBase64: b64(md)})
	if err != nil || again.ResumeID != out.ResumeID || again.ResumeHash != out.ResumeHash || again.SourceHash != out.SourceHash {
		t.Errorf("re-ingesting = %+v, %v; want the same ids and hashes", again, err)
	}
	all, _ := svc.ListAtoms(ctx, c, career.AtomListInput{})
	if len(all.Atoms) != atoms {
		t.Errorf("after re-ingesting there are %d atoms, want %d", len(all.Atoms), atoms)
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
		{"InlineOneByteTooLarge", career.IngestResumeInput{FileName: "cv.md", ContentBase64: b64(bytes.Repeat([]byte("a"), career.MaxInlineResumeBytes+1))}, "content_base64"},
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

func testFormats(t *testing.T, tbl store.Table, blobs store.Blobs) {
	ctx := context.Background()
	svc, c := career.New(tbl, blobs, nil), newCaller(t, tbl)
	for _, tc := range []struct {
		file, format string
		want         []string // section | text
	}{
		{"sam-ortiz.txt", "text", []string{
			"PROFESSIONAL EXPERIENCE > Senior Backend Engineer, Northwind Logistics (2020-2025) | Rebuilt the shipment tracking pipeline on Kafka and Go, cutting delivery delays reported by customers by 30%.",
			"PROFESSIONAL EXPERIENCE > Senior Backend Engineer, Northwind Logistics (2020-2025) | Ran the migration of 40 services from EC2 to AWS Lambda.",
			"PROFESSIONAL EXPERIENCE > Senior Backend Engineer, Northwind Logistics (2020-2025) | Mentored four junior engineers.",
			"PROFESSIONAL EXPERIENCE > Software Engineer, Contoso Bank (2016-2020) | Built the fraud scoring API in Python, serving 3,000 requests per second.",
			"PROFESSIONAL EXPERIENCE > Software Engineer, Contoso Bank (2016-2020) | Introduced end-to-end tests for the card payments flow.",
			"PROFESSIONAL EXPERIENCE > Open Source Work | Maintainer of a Go client for the Stripe API.",
			"PROFESSIONAL EXPERIENCE > Open Source Work | Contributor to the Terraform AWS provider.",
			"Skills | Go, Python, Kafka, PostgreSQL, AWS Lambda, Terraform",
			"Skills | Incident response and on-call leadership",
		}},
		{"dana-lee.md", "markdown", []string{
			"Dana Lee > Experience > Staff Engineer, Acme Payments (2021-2025) | Cut p99 latency of the payments API by 40% by moving it to AWS Lambda and DynamoDB.",
			"Dana Lee > Experience > Staff Engineer, Acme Payments (2021-2025) | Led a team of five engineers through a zero-downtime migration of the ledger.",
			"Dana Lee > Experience > Staff Engineer, Acme Payments (2021-2025) | Designed the single-table DynamoDB data model for the card authorisation service.",
			"Dana Lee > Experience > Software Engineer, Initech (2017-2021) | Built the Go billing service that invoices 2 million customers a month.",
			"Dana Lee > Experience > Software Engineer, Initech (2017-2021) | Introduced contract tests between services.",
			"Dana Lee > Skills | Go, Python, Terraform, AWS Lambda, DynamoDB",
			"Dana Lee > Skills | Mentoring engineers and running design reviews",
		}},
		{"priya-raman.docx", "docx", []string{
			"Priya Raman > EXPERIENCE > Staff Data Engineer, Fabrikam (2019-2025) | Designed the event pipeline that loads 5 TB a day into BigQuery with exactly-once delivery.",
			"Priya Raman > EXPERIENCE > Staff Data Engineer, Fabrikam (2019-2025) | Cut the nightly batch from six hours to forty minutes by moving it to Apache Beam.",
			"Priya Raman > EXPERIENCE > Data Engineer, Tailspin Toys (2015-2019) | Built the sales forecasting models in Python & scikit-learn.",
			"Priya Raman > SKILLS | Python, SQL, Apache Beam, BigQuery, Airflow",
			"Priya Raman > SKILLS | Coaching analysts in data modelling",
		}},
		{"lee-chen.pdf", "pdf", []string{
			"Lee Chen > Experience > Site Reliability Engineer, Adatum (2020-2025) | Automated failover of the Postgres fleet, cutting recovery time from 40 to 4 minutes.",
			"Lee Chen > Experience > Site Reliability Engineer, Adatum (2020-2025) | Ran the on-call rotation for 12 teams and wrote its runbooks.",
			"Lee Chen > Experience > Systems Administrator, Litware (2016-2020) | Moved 200 servers into Terraform-managed AWS accounts.",
			"Lee Chen > Skills | Kubernetes, Terraform, Prometheus, Go, Bash",
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			out, err := svc.IngestResume(ctx, c, career.IngestResumeInput{FileName: tc.file, ContentBase64: b64(readFixture(t, tc.file))})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range out.Atoms {
				got = append(got, a.Section+" | "+a.Text)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("atoms mismatch (-want +got):\n%s", diff)
			}
			if out.Format != tc.format || !out.Persisted || len(out.Warnings) != 0 {
				t.Errorf("IngestResume(%s) = format %s, persisted %v, warnings %v", tc.file, out.Format, out.Persisted, out.Warnings)
			}
			stored, err := svc.ListAtoms(ctx, c, career.AtomListInput{ResumeID: out.ResumeID})
			if err != nil || len(stored.Atoms) != len(tc.want) {
				t.Errorf("%d atoms stored (%v), want %d", len(stored.Atoms), err, len(tc.want))
			}
		})
	}
	// A persisted resume without atoms says so.
	out, err := svc.IngestResume(ctx, c, career.IngestResumeInput{FileName: "note.txt", ContentBase64: b64([]byte("Call Sam on Tuesday about the flat.\n"))})
	if err != nil || !out.Persisted || len(out.Atoms) != 0 || len(out.Warnings) != 1 || !strings.Contains(out.Warnings[0], "no experience atoms") {
		t.Errorf("IngestResume(no sections) = %+v, %v; want it persisted with a warning that it has no atoms", out, err)
	}
}

func testReingest(t *testing.T, tbl store.Table, blobs store.Blobs) {
	ctx := context.Background()
	cb := &countingBlobs{Blobs: blobs}
	svc, c := career.New(tbl, cb, nil), newCaller(t, tbl)
	md := readFixture(t, "dana-lee.md")
	first, err := svc.IngestResume(ctx, c, career.IngestResumeInput{FileName: "dana-lee.md", ContentBase64: b64(md)})
	if err != nil {
		t.Fatal(err)
	}
	// Edit one atom twice.
	a := first.Atoms[0]
	for _, text := range []string{"Cut p99 latency of the payments API by 40%.", "Cut p99 latency of the payments API by 40% (from 900 to 540 ms)."} {
		up, err := svc.UpdateAtom(ctx, c, career.AtomUpdateInput{AtomID: a.AtomID, ExpectedVersion: a.Version, Text: text, Section: a.Section, ResumeID: a.ResumeID})
		if err != nil {
			t.Fatal(err)
		}
		a = up.Atom
	}
	// Atoms an older extractor wrote under this resume, one untouched since
	// and one edited (atom_update drops the extraction mark).
	atomsPK := tenant.Key(c.Tenant) + "career#atoms"
	prefix := strings.Replace(first.ResumeID, "resume_", "atom_", 1) + "_"
	old := func(id string, ver int64, extracted bool) {
		attrs := store.Attrs{"text": "Wrote Perl", "section": "Skills", "resume_id": first.ResumeID, "source_hash": text.Hash64Hex("Wrote Perl"),
			"ver": ver, "created_at": "2024-01-01T00:00:00Z", "updated_at": "2024-01-01T00:00:00Z"}
		if extracted {
			attrs["extracted"] = true
		}
		if err := tbl.Put(ctx, store.Item{PK: atomsPK, SK: prefix + id, Attrs: attrs}, store.IfAbsent()); err != nil {
			t.Fatal(err)
		}
	}
	old("000", 1, true)
	old("001", 2, false)
	puts := cb.puts.Load()

	// The same resume again, by another name and extension.
	again, err := svc.IngestResume(ctx, c, career.IngestResumeInput{FileName: "dana-lee.txt", ContentBase64: b64(md)})
	if err != nil || again.ResumeID != first.ResumeID || !again.Persisted {
		t.Fatalf("re-ingesting = %+v, %v", again, err)
	}
	if got := again.Atoms[0]; got.AtomID != a.AtomID || got.Text != a.Text || got.Version != 3 {
		t.Errorf("after re-ingesting, the edited atom is %+v; want its edit at version 3", got)
	}
	stored, err := svc.GetAtoms(ctx, c, career.AtomGetInput{AtomIDs: []string{a.AtomID, prefix + "000", prefix + "001"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(stored.Atoms) != 2 || stored.Atoms[0].Text != a.Text || stored.Atoms[0].Version != 3 || stored.Atoms[1].AtomID != prefix+"001" ||
		!cmp.Equal(stored.Missing, []string{prefix + "000"}) {
		t.Errorf("stored after re-ingesting: %+v", stored)
	}
	if !cmp.Equal(again.RemovedAtoms, []string{prefix + "000"}) || len(again.Warnings) != 1 || !strings.Contains(again.Warnings[0], prefix+"001") {
		t.Errorf("re-ingesting reported removed %v, warnings %v; want the untouched old atom removed and the edited one kept", again.RemovedAtoms, again.Warnings)
	}
	if diff := cmp.Diff(first.Atoms[1:], again.Atoms[1:]); diff != "" {
		t.Errorf("the unedited atoms changed (-before +after):\n%s", diff)
	}
	if n := cb.puts.Load() - puts; n != 0 {
		t.Errorf("re-ingesting a recorded resume wrote %d objects", n)
	}
	// A writer still holding an old version loses.
	for _, v := range []int64{1, 2} {
		_, err = svc.UpdateAtom(ctx, c, career.AtomUpdateInput{AtomID: a.AtomID, ExpectedVersion: v, Text: "stale", Section: a.Section})
		wantKind(t, err, fault.KindConflict, "")
	}
}

// failingTable is a store.Table whose transactions fail, from the failAt-th
// on, as a table that went away would.
type failingTable struct {
	store.Table
	failAt int
	calls  atomic.Int64
}

func (f *failingTable) Transact(ctx context.Context, writes ...store.Write) error {
	if f.calls.Add(1) >= int64(f.failAt) {
		return errors.New("connection reset")
	}
	return f.Table.Transact(ctx, writes...)
}

func testFailedIngest(t *testing.T, tbl store.Table, blobs store.Blobs) {
	ctx := context.Background()
	c := newCaller(t, tbl)
	var md strings.Builder
	md.WriteString("# Long resume\n\n## Skills\n\n")
	for i := range 150 {
		fmt.Fprintf(&md, "- Skill statement number %d, in Go\n", i)
	}
	in := career.IngestResumeInput{FileName: "long.md", ContentBase64: b64([]byte(md.String())), TraceID: audit.NewTraceID()}
	// The second of its two transactions fails.
	_, err := career.New(&failingTable{Table: tbl, failAt: 2}, blobs, nil).IngestResume(ctx, c, in)
	wantKind(t, err, fault.KindUnavailable, "")
	svc := career.New(tbl, blobs, nil)
	dry, err := svc.IngestResume(ctx, c, career.IngestResumeInput{FileName: in.FileName, ContentBase64: in.ContentBase64, Persist: new(bool)})
	if err != nil || len(dry.Atoms) != 150 {
		t.Fatalf("the resume yields %d atoms (%v), want 150", len(dry.Atoms), err)
	}
	resumesPK := tenant.Key(c.Tenant) + "career#resumes"
	if _, err := tbl.Get(ctx, resumesPK, dry.ResumeID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("after a failed ingestion the resume is recorded (%v): a record must mean all its atoms are stored", err)
	}
	prefix := tenant.BlobPrefix(c.Tenant) + "resumes/" + dry.ResumeID + "/"
	objects := func() []string {
		t.Helper()
		page, err := blobs.List(ctx, prefix, nil)
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, b := range page.Blobs {
			keys = append(keys, b.Key)
		}
		return keys
	}
	want := []string{prefix + "canonical.md", prefix + "original.md"}
	if diff := cmp.Diff(want, objects()); diff != "" {
		t.Errorf("objects after the failure mismatch (-want +got):\n%s", diff)
	}
	// The retry the error asks for completes the resume with the same objects.
	out, err := svc.IngestResume(ctx, c, in)
	if err != nil || len(out.Atoms) != 150 || !out.Persisted || out.ObjectKey != want[0] {
		t.Fatalf("retry = %d atoms, persisted %v, object %s, %v", len(out.Atoms), out.Persisted, out.ObjectKey, err)
	}
	rec, err := tbl.Get(ctx, resumesPK, out.ResumeID)
	if err != nil || rec.String("canonical_key") != want[0] || rec.String("object_key") != want[1] || rec.Int("atoms") != 150 {
		t.Errorf("record after the retry = %+v, %v", rec, err)
	}
	if diff := cmp.Diff(want, objects()); diff != "" {
		t.Errorf("objects after the retry mismatch (-want +got):\n%s", diff)
	}
	all, err := svc.ListAtoms(ctx, c, career.AtomListInput{ResumeID: out.ResumeID, Limit: 1000})
	if err != nil || len(all.Atoms) != 150 {
		t.Errorf("%d atoms stored (%v), want 150", len(all.Atoms), err)
	}
	var outcomes []string
	for _, e := range events(t, tbl, c, in.TraceID) {
		if e.Type == audit.IngestCompleted {
			outcomes = append(outcomes, fmt.Sprint(e.Outcome, " ", e.Detail["persisted"]))
		}
	}
	if diff := cmp.Diff([]string{"error: unavailable false", "ok true"}, outcomes); diff != "" {
		t.Errorf("IngestCompleted events mismatch (-want +got):\n%s", diff)
	}
}

func testConcurrentIngest(t *testing.T, tbl store.Table, blobs store.Blobs) {
	const callers = 8
	ctx := context.Background()
	svc, c := career.New(tbl, blobs, nil), newCaller(t, tbl)
	in := career.IngestResumeInput{FileName: "sam-ortiz.txt", ContentBase64: b64(readFixture(t, "sam-ortiz.txt"))}
	outs := make([]career.IngestResumeOutput, callers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range callers {
		wg.Go(func() {
			<-start
			var err error
			if outs[i], err = svc.IngestResume(ctx, c, in); err != nil {
				t.Errorf("IngestResume: %v", err)
			}
		})
	}
	close(start)
	wg.Wait()
	for _, out := range outs[1:] {
		if diff := cmp.Diff(outs[0].Atoms, out.Atoms); diff != "" || !out.Persisted {
			t.Errorf("concurrent ingestions disagree (-first +other):\n%s", diff)
		}
	}
	all, err := svc.ListAtoms(ctx, c, career.AtomListInput{})
	if err != nil || len(all.Atoms) != len(outs[0].Atoms) || len(all.Atoms) == 0 {
		t.Errorf("%d atoms stored (%v), want %d", len(all.Atoms), err, len(outs[0].Atoms))
	}
	for _, a := range all.Atoms {
		if a.Version != 1 {
			t.Errorf("atom %s is at version %d after concurrent ingestions, want 1", a.AtomID, a.Version)
		}
	}
}

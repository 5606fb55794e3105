package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/apikey"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/config/blobs"
	"github.com/switchboard-dev/switchboard/shared/config/providers"
	"github.com/switchboard-dev/switchboard/shared/document/documenttest"
	"github.com/switchboard-dev/switchboard/shared/gateway"
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/local"
	"github.com/switchboard-dev/switchboard/shared/vector"
)

// folder writes a folder of documents to ingest: readable ones, an empty
// one, a corrupt one, one larger than a call carries inline, files of other
// formats and a hidden folder.
func folder(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	big := strings.Repeat("Tides rise and fall twice a day as the moon pulls the oceans.\n\n", vector.MaxInlineBytes/60)
	for name, data := range map[string]string{
		"guide.md":        "# Guide\n\nRun the installer, then sign in with your API key.",
		"notes/tides.txt": "The tides are caused by the moon.",
		"notes/empty.md":  " \n\n",
		"scan.pdf":        "not a pdf at all",
		"paper.pdf": string(documenttest.PDF([]string{
			"<< /Type /Catalog /Pages 2 0 R >>",
			"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
			"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
			"<< /Length 58 >>\nstream\nBT /F1 12 Tf 72 720 Td (Volcanoes erupt when magma rises.) Tj ET\nendstream",
			"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
		}, "/Root 1 0 R")),
		"big.txt":      big,
		"photo.png":    "\x89PNG",
		"data.json":    "{}",
		".git/HEAD.md": "hidden",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func runIngest(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func wantLines(t *testing.T, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("output lacks %q:\n%s", w, got)
		}
	}
}

func TestAFolderIsIngestedSkippedAndRefusedFileByFile(t *testing.T) {
	docs, data := folder(t), t.TempDir()
	code, out, errOut := runIngest(t, "--store", "docs", "--data", data, docs)
	if code != 1 {
		t.Errorf("exit status %d, want 1: a file was refused", code)
	}
	wantLines(t, out,
		"ingested  4 (4 added, 0 replaced)",
		"skipped   1 (0 unchanged, 1 with no text to index)",
		"refused   1",
		"not sent  2 (a format the tool does not read: .json 1, .png 1)",
		"skipped notes/empty.md: no text to index",
		"refused scan.pdf: content_base64: cannot be read as .pdf",
	)
	wantLines(t, errOut, `created vector store "docs"`, "[1/6] big.txt: added, ", "[6/6] scan.pdf: refused: ")
	if strings.Contains(out+errOut, "HEAD.md") {
		t.Errorf("a hidden folder was ingested:\n%s", out)
	}
	// Again: nothing changed, so nothing is done.
	code, out, _ = runIngest(t, "--store", "docs", "--data", data, docs)
	wantLines(t, out, "ingested  0 (0 added, 0 replaced), 0 chunks", "skipped   5 (4 unchanged, 1 with no text to index)")
	if code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
}

func TestARunningServerIsIngestedThrough(t *testing.T) {
	ctx := context.Background()
	docs, data := folder(t), t.TempDir()
	cfg := config.Local(data)
	deps, closeFn, err := lambdafn.Open(ctx, &cfg, lambdafn.Openers{Blobs: blobs.Open, Providers: providers.Open}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	keys := apikey.New(deps.Table, nil)
	secret, _, err := keys.Create(ctx, "acme", "ci", nil, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	stack, err := local.New(local.Options{Deps: deps, Functions: handlers.All()})
	if err != nil {
		t.Fatal(err)
	}
	gw, err := gateway.New(gateway.Options{Catalog: catalog.Default(), Invoker: stack, Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gw.Handler())
	defer srv.Close()

	// The server holds the data folder: opening it says how to go through it.
	code, _, errOut := runIngest(t, "--store", "docs", "--data", data, docs)
	if code != 1 || !strings.Contains(errOut, "another process holds it") || !strings.Contains(errOut, "--url http://127.0.0.1:8080/mcp") {
		t.Errorf("ingesting into a held folder: status %d, stderr %s; want a refusal naming --url", code, errOut)
	}
	code, out, errOut := runIngest(t, "--store", "docs", "--url", srv.URL+"/mcp", "--key", secret, docs)
	if code != 1 {
		t.Errorf("exit status %d, want 1:\n%s", code, errOut)
	}
	wantLines(t, out,
		"through "+srv.URL+"/mcp",
		"ingested  3 (3 added, 0 replaced)",
		"refused   2",
		"refused big.txt: ",
		"a call may carry inline; ingest it without --url, by key",
	)
	acme, err := keys.Verify(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	stores, err := vector.New(deps.Table, deps.Blobs, deps.Embedder, nil).ListDocuments(ctx, acme.Caller(), vector.ListDocumentsInput{Store: "docs"})
	if err != nil || len(stores.Documents) != 3 {
		t.Errorf("the server's store holds %+v, %v; want the 3 documents", stores.Documents, err)
	}
}

func TestTheProgressBarSaysFilesChunksRateAndTimeLeft(t *testing.T) {
	now := time.Unix(0, 0)
	p := &progress{now: func() time.Time { return now }, start: now, files: 4, bytes: 4000}
	now = now.Add(2 * time.Second)
	p.doneFiles, p.doneBytes, p.chunks = 1, 1000, 30
	got := p.bar("guides/setup.md")
	want := "[######------------------] 1/4 files  30 chunks  0.5 files/s  15 chunks/s  6s left  guides/setup.md"
	if got != want {
		t.Errorf("bar = %q\n want %q", got, want)
	}
}

func TestBadUsageIsRefused(t *testing.T) {
	for _, args := range [][]string{{}, {"--store", "docs"}, {"somewhere"}, {"--store", "docs", "a", "b"}} {
		if code, _, _ := runIngest(t, args...); code != 2 {
			t.Errorf("run(%q) = %d, want 2", args, code)
		}
	}
}

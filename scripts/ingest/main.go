// Command ingest adds the files of a folder to a vector store, each through
// the vector_document_ingest tool, as a host would call it:
//
//	go run ./scripts/ingest --store docs ./docs                                   # the local data folder, .switchboard
//	go run ./scripts/ingest --store docs --data DIR ./docs
//	go run ./scripts/ingest --store docs --url http://127.0.0.1:8080/mcp ./docs   # through a running server
//
// Without --url it opens the data folder (--data, default .switchboard) and
// serves the tool in process, through the gateway, for tenant --tenant
// (default local), as `go run ./functions/gateway` does; a folder a running
// server holds cannot be opened, so then pass that server's MCP URL (and
// --key, or SWITCHBOARD_KEY, once it requires keys). It creates the store if
// it does not exist.
//
// Every file with a format the tool reads (.txt, .md, .pdf, .docx) is sent,
// its path under the folder as document id; hidden files and folders are
// left out. A file larger than a call may carry inline (1 MiB) is stored in
// the data folder's blobs under tenants/<tenant>/documents/<store>/ and
// ingested by key, which only works without --url. Ingesting a file again
// that has not changed does nothing. Progress goes to stderr (a bar on a
// terminal, a line per file otherwise); the summary of what was ingested,
// skipped and refused, with reasons, to stdout. The exit status is 1 if any
// file was refused.
package main

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/signal"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/config/blobs"
	"github.com/switchboard-dev/switchboard/shared/config/providers"
	"github.com/switchboard-dev/switchboard/shared/document"
	"github.com/switchboard-dev/switchboard/shared/gateway"
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/local"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
	"github.com/switchboard-dev/switchboard/shared/vector"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// options are the command's flags and folder.
type options struct {
	store, description string
	data, tenant       string
	url, key           string
	dir                string
}

func parse(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("ingest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.store, "store", "", "the vector store `alias` to add the files to (created if missing)")
	fs.StringVar(&o.description, "description", "", "the store's `description`, if it is created (default: the folder's name)")
	fs.StringVar(&o.data, "data", ".switchboard", "the local data `folder`, when not ingesting through --url")
	fs.StringVar(&o.tenant, "tenant", tenant.Local, "the `tenant` to ingest for, when not ingesting through --url")
	fs.StringVar(&o.url, "url", "", "the MCP `URL` of a running server to ingest through, such as http://127.0.0.1:8080/mcp")
	fs.StringVar(&o.key, "key", os.Getenv("SWITCHBOARD_KEY"), "the API `key` for --url (default $SWITCHBOARD_KEY)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: go run ./scripts/ingest --store NAME [--data DIR | --url URL [--key KEY]] FOLDER\n\nAdds every .txt, .md, .pdf and .docx file under FOLDER to a vector store.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.store == "" || fs.NArg() != 1 {
		fs.Usage()
		return o, errors.New("give --store and one folder")
	}
	o.dir = fs.Arg(0)
	if o.description == "" {
		abs, _ := filepath.Abs(o.dir)
		o.description = "Files from " + filepath.Base(abs)
	}
	return o, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parse(args, stderr)
	if err != nil {
		return 2
	}
	files, unsupported, err := collect(ctx, o.dir)
	if err != nil {
		fmt.Fprintln(stderr, "ingest:", err)
		return 1
	}
	cs, blobs, closeFn, err := connect(ctx, o, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "ingest:", err)
		return 1
	}
	defer closeFn()
	created, err := ensureStore(ctx, cs, o)
	if err != nil {
		fmt.Fprintln(stderr, "ingest:", err)
		return 1
	}
	if created {
		fmt.Fprintf(stderr, "created vector store %q\n", o.store)
	}
	sum := summary{store: o.store, where: where(o), unsupported: unsupported}
	bar := newProgress(stderr, files)
	start := time.Now()
	for _, f := range files {
		if ctx.Err() != nil {
			break
		}
		r, err := ingestFile(ctx, cs, blobs, o, f)
		if err != nil {
			bar.done()
			fmt.Fprintln(stderr, "ingest:", err)
			sum.write(stdout, time.Since(start))
			return 1
		}
		sum.add(r)
		bar.step(r)
	}
	bar.done()
	sum.write(stdout, time.Since(start))
	if ctx.Err() != nil || len(sum.refused) > 0 {
		return 1
	}
	return 0
}

// file is one file to ingest: its path under the folder, slash-separated,
// is its document id.
type file struct {
	rel, path string
	size      int64
}

// collect lists the files under dir that the tool can read, in path order,
// and counts the others by extension. Hidden files and folders are left out.
func collect(ctx context.Context, dir string) ([]file, map[string]int, error) {
	var files []file
	unsupported := map[string]int{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), ".") && p != dir {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		// Extract refuses a format it does not read by the file name
		// alone, before looking at any content.
		if _, err := document.Extract(ctx, d.Name(), nil); errors.Is(err, document.ErrUnsupported) {
			unsupported[strings.ToLower(cmp.Or(filepath.Ext(d.Name()), "(none)"))]++
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		files = append(files, file{rel: filepath.ToSlash(rel), path: p, size: info.Size()})
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	slices.SortFunc(files, func(a, b file) int { return strings.Compare(a.rel, b.rel) })
	return files, unsupported, nil
}

// connect opens an MCP session with the server that serves the tool: the one
// at o.url, or one in this process on the data folder. objects is the data
// folder's object store, nil through --url.
func connect(ctx context.Context, o options, stderr io.Writer) (cs *mcp.ClientSession, objects store.Blobs, closeFn func(), err error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "switchboard-ingest", Version: gateway.Version}, nil)
	if o.url != "" {
		hc := &http.Client{}
		if o.key != "" {
			hc.Transport = bearer{o.key}
		}
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: o.url, HTTPClient: hc}, nil)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("connecting to %s: %w", o.url, err)
		}
		return cs, nil, func() { cs.Close() }, nil
	}
	cfg := config.Local(o.data)
	deps, closeDeps, err := lambdafn.Open(ctx, &cfg, lambdafn.Openers{Blobs: blobs.Open, Providers: providers.Open}, stderr)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("opening the data folder %s: %w\nIf a server is running on it, ingest through that server: --url http://127.0.0.1:8080/mcp (its address)", o.data, err)
	}
	cat := catalog.Default()
	var fns []lambdafn.Function
	for _, name := range []string{"vector_store_get", "vector_store_create", "vector_document_ingest"} {
		t, _ := cat.Tool(name)
		i := slices.IndexFunc(handlers.All(), func(f lambdafn.Function) bool { return f.Path == t.Function })
		fns = append(fns, handlers.All()[i])
	}
	stack, err := local.New(local.Options{Catalog: cat, Deps: deps, Functions: fns})
	if err != nil {
		closeDeps()
		return nil, nil, nil, err
	}
	gw, err := gateway.New(gateway.Options{
		Catalog: cat, Invoker: stack,
		Anonymous: &tenant.Caller{Tenant: o.tenant, Principal: "ingest"},
	})
	if err != nil {
		closeDeps()
		return nil, nil, nil, err
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := gw.Server().Connect(ctx, st, nil)
	if err == nil {
		cs, err = client.Connect(ctx, ct, nil)
	}
	if err != nil {
		closeDeps()
		return nil, nil, nil, err
	}
	return cs, deps.Blobs, func() { cs.Close(); ss.Wait(); closeDeps() }, nil
}

// bearer is an http.RoundTripper that adds an Authorization header.
type bearer struct{ key string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

func where(o options) string {
	if o.url != "" {
		return "through " + o.url
	}
	return fmt.Sprintf("tenant %s, %s", o.tenant, o.data)
}

// callTool calls a tool and returns its structured content decoded into out,
// or its error message as toolErr; err is a failure to call at all.
func callTool(ctx context.Context, cs *mcp.ClientSession, name string, args map[string]any, out any) (toolErr string, err error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "", fmt.Errorf("calling %s: %w", name, err)
	}
	if res.IsError {
		var msg []string
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				msg = append(msg, tc.Text)
			}
		}
		return strings.Join(msg, " "), nil
	}
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, out); err != nil {
		return "", fmt.Errorf("decoding the result of %s: %w", name, err)
	}
	return "", nil
}

// ensureStore creates the store unless it exists.
func ensureStore(ctx context.Context, cs *mcp.ClientSession, o options) (created bool, err error) {
	var st vector.Store
	if msg, err := callTool(ctx, cs, "vector_store_get", map[string]any{"alias": o.store}, &st); err != nil || msg == "" {
		return false, err
	}
	msg, err := callTool(ctx, cs, "vector_store_create", map[string]any{"alias": o.store, "description": o.description}, &st)
	if err == nil && msg != "" {
		err = fmt.Errorf("creating store %q: %s", o.store, msg)
	}
	return err == nil, err
}

// result is what became of one file.
type result struct {
	file   file
	status string // added, replaced, unchanged, empty or refused
	chunks int
	reason string // why it was refused
}

// ingestFile sends f to vector_document_ingest: inline if it fits a call,
// else by key, after storing it in the data folder's blobs where an upload
// to the bucket would go.
func ingestFile(ctx context.Context, cs *mcp.ClientSession, blobs store.Blobs, o options, f file) (result, error) {
	r := result{file: f}
	args := map[string]any{"store": o.store, "doc_id": f.rel, "file_name": path.Base(f.rel)}
	switch {
	case f.size > document.MaxBytes:
		r.status, r.reason = "refused", fmt.Sprintf("%d bytes, more than the %d a document may have", f.size, document.MaxBytes)
		return r, nil
	case f.size > vector.MaxInlineBytes && blobs == nil:
		r.status, r.reason = "refused", fmt.Sprintf("%d bytes, more than the %d a call may carry inline; ingest it without --url, by key", f.size, vector.MaxInlineBytes)
		return r, nil
	}
	data, err := os.ReadFile(f.path)
	if err != nil {
		r.status, r.reason = "refused", err.Error()
		return r, nil
	}
	if len(data) > vector.MaxInlineBytes {
		key := tenant.BlobPrefix(o.tenant) + "documents/" + o.store + "/" + f.rel
		if _, err := blobs.Put(ctx, key, data, nil); err != nil {
			r.status, r.reason = "refused", fmt.Sprintf("storing it as %s: %v", key, err)
			return r, nil
		}
		args["key"] = key
	} else {
		args["content_base64"] = base64.StdEncoding.EncodeToString(data)
	}
	var out vector.IngestOutput
	msg, err := callTool(ctx, cs, "vector_document_ingest", args, &out)
	switch {
	case err != nil:
		return r, err
	case strings.HasSuffix(msg, vector.ErrNoText.Error()):
		r.status = "empty"
	case msg != "":
		r.status, r.reason = "refused", msg
	default:
		r.status, r.chunks = out.Status, out.Chunks
	}
	return r, nil
}

// summary tallies the results.
type summary struct {
	store, where               string
	added, replaced, unchanged int
	chunks                     int // of the documents added or replaced
	empty, refused             []result
	unsupported                map[string]int
}

func (s *summary) add(r result) {
	switch r.status {
	case "added":
		s.added++
		s.chunks += r.chunks
	case "replaced":
		s.replaced++
		s.chunks += r.chunks
	case "unchanged":
		s.unchanged++
	case "empty":
		s.empty = append(s.empty, r)
	default:
		s.refused = append(s.refused, r)
	}
}

func (s *summary) write(w io.Writer, took time.Duration) {
	fmt.Fprintf(w, "Vector store %q (%s), %v:\n", s.store, s.where, took.Round(time.Millisecond))
	fmt.Fprintf(w, "  ingested  %d (%d added, %d replaced), %d chunks\n", s.added+s.replaced, s.added, s.replaced, s.chunks)
	fmt.Fprintf(w, "  skipped   %d (%d unchanged, %d with no text to index)\n", s.unchanged+len(s.empty), s.unchanged, len(s.empty))
	fmt.Fprintf(w, "  refused   %d\n", len(s.refused))
	if n := sumValues(s.unsupported); n > 0 {
		var exts []string
		for ext, c := range s.unsupported {
			exts = append(exts, fmt.Sprintf("%s %d", ext, c))
		}
		slices.Sort(exts)
		fmt.Fprintf(w, "  not sent  %d (a format the tool does not read: %s)\n", n, strings.Join(exts, ", "))
	}
	for _, r := range s.empty {
		fmt.Fprintf(w, "skipped %s: no text to index\n", r.file.rel)
	}
	for _, r := range s.refused {
		fmt.Fprintf(w, "refused %s: %s\n", r.file.rel, r.reason)
	}
}

func sumValues(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

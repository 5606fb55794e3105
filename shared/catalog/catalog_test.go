package catalog_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/rag"
	"github.com/switchboard-dev/switchboard/shared/vector"
)

// schemas decodes tool's schemas, failing the test if either is missing.
func schemas(t *testing.T, tool *catalog.Tool) (in, out *jsonschema.Schema) {
	t.Helper()
	in, out = &jsonschema.Schema{}, &jsonschema.Schema{}
	if err := json.Unmarshal(tool.InputSchema, in); err != nil {
		t.Fatalf("input schema %q: %v; run go run ./scripts/generate", tool.InputSchema, err)
	}
	if err := json.Unmarshal(tool.OutputSchema, out); err != nil {
		t.Fatalf("output schema %q: %v; run go run ./scripts/generate", tool.OutputSchema, err)
	}
	return in, out
}

func TestDefaultCatalogIsValid(t *testing.T) {
	cat := catalog.Default()
	for _, tool := range cat.Tools() {
		t.Run(tool.Name, func(t *testing.T) {
			input, output := schemas(t, tool)
			if input.Type != "object" || output.Type != "object" {
				t.Errorf("input type %q, output type %q: both must be object", input.Type, output.Type)
			}
			in, err := input.Resolve(nil)
			if err != nil {
				t.Fatalf("input schema: %v", err)
			}
			if _, err := output.Resolve(nil); err != nil {
				t.Fatalf("output schema: %v", err)
			}
			var example any
			if err := json.Unmarshal(tool.Example, &example); err != nil {
				t.Fatalf("example is not JSON: %v", err)
			}
			if err := in.Validate(example); err != nil {
				t.Errorf("example %s does not match the input schema: %v", tool.Example, err)
			}
			if tool.Annotations == nil || tool.Annotations.ReadOnlyHint == tool.Mutates {
				t.Errorf("annotations %+v disagree with Mutates=%v", tool.Annotations, tool.Mutates)
			}
			for _, b := range []json.RawMessage{tool.InputSchema, tool.OutputSchema} {
				if strings.Contains(string(b), `"null"`) {
					t.Errorf("a schema admits null, which Switchboard never sends: %s", b)
				}
			}
			if !strings.HasPrefix(tool.Function, tool.Family+"/") {
				t.Errorf("function %q is not under its family %q", tool.Function, tool.Family)
			}
		})
	}
	// One function per entry, but for the connectors' proxy function, whose
	// internal tools share its pooled upstream sessions.
	proxy, _ := cat.Function(catalog.ConnectorProxyFunction)
	if len(proxy.Tools) < 2 || len(cat.Functions()) != len(cat.Tools())+len(cat.Resources())+len(cat.Triggers())-len(proxy.Tools)+1 {
		t.Errorf("%d functions for %d tools and %d resources: some function other than %s serves two entries", len(cat.Functions()), len(cat.Tools()), len(cat.Resources()), catalog.ConnectorProxyFunction)
	}
}

func TestNewRejectsIncompleteEntries(t *testing.T) {
	good := *catalog.Default().Tools()[0]
	for _, tc := range []struct {
		name   string
		change func(*catalog.Tool)
	}{
		{"NoTitle", func(t *catalog.Tool) { t.Title = "" }},
		{"NoFunction", func(t *catalog.Tool) { t.Function = "" }},
		{"UnknownVisibility", func(t *catalog.Tool) { t.Visibility = "secret" }},
		{"MutatingWithoutTableWrites", func(t *catalog.Tool) { t.Mutates, t.Table = true, catalog.Read }},
		{"MutatingWithTablePutsOnly", func(t *catalog.Tool) { t.Mutates, t.Table = true, catalog.ReadPut }},
		{"BucketPutsOnly", func(t *catalog.Tool) { t.Blobs = catalog.ReadPut }},
		{"NoTimeout", func(t *catalog.Tool) { t.Limits.Timeout = 0 }},
		{"KeysWithoutBlobAccess", func(t *catalog.Tool) { t.Blobs, t.BlobKeys = catalog.NoAccess, []string{"tenants/*"} }},
		{"InvokingAnUnknownFunction", func(t *catalog.Tool) { t.Invokes = []string{"vector/nowhere"} }},
		{"InvokingItself", func(t *catalog.Tool) { t.Invokes = []string{t.Function} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := good
			tc.change(&bad)
			if _, err := catalog.New([]*catalog.Tool{&bad}, nil, nil); err == nil {
				t.Error("New accepted it")
			}
		})
	}
	if _, err := catalog.New([]*catalog.Tool{&good, &good}, nil, nil); err == nil {
		t.Error("New accepted a tool defined twice")
	}
}

func TestFunctionsMergeKeysAndInvokes(t *testing.T) {
	entry := func(name, function string, blobs catalog.Access, keys, invokes []string) *catalog.Tool {
		tool := *catalog.Default().Tools()[0]
		tool.Name, tool.Function, tool.Blobs, tool.BlobKeys, tool.Invokes = name, function, blobs, keys, invokes
		return &tool
	}
	cat, err := catalog.New([]*catalog.Tool{
		entry("a1", "memory/a", catalog.Read, []string{"x/*"}, []string{"memory/b"}),
		entry("a2", "memory/a", catalog.Read, []string{"y/*", "x/*"}, []string{"memory/c", "memory/b"}),
		entry("b1", "memory/b", catalog.Read, []string{"x/*"}, nil),
		entry("b2", "memory/b", catalog.Read, nil, nil), // the whole bucket
		entry("c1", "memory/c", catalog.NoAccess, nil, nil),
	}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	type merged struct{ Keys, Invokes []string }
	got := map[string]merged{}
	for _, f := range cat.Functions() {
		got[f.Path] = merged{f.BlobKeys, f.Invokes}
	}
	want := map[string]merged{
		"memory/a": {[]string{"x/*", "y/*"}, []string{"memory/b", "memory/c"}},
		"memory/b": {},
		"memory/c": {},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}

func TestTheSearchWorkerIsInternalAndReadsOnlyShardsAndCentroids(t *testing.T) {
	cat := catalog.Default()
	worker, ok := cat.Tool("optimizer_vs-search-group")
	if !ok {
		t.Fatal("no optimizer_vs-search-group")
	}
	if worker.Visibility != catalog.Internal || worker.Table != catalog.NoAccess || worker.Blobs != catalog.Read ||
		!slices.Equal(worker.BlobKeys, []string{vector.ShardKeys, vector.CentroidKeys}) || worker.Mutates || len(worker.Invokes) > 0 {
		t.Errorf("the worker is %+v; want internal, reading shard and centroids objects only", worker)
	}
	retriever, _ := cat.Tool("optimizer_vs-retriever")
	if !slices.Equal(retriever.Invokes, []string{worker.Function}) {
		t.Errorf("the retriever invokes %v, want exactly %s", retriever.Invokes, worker.Function)
	}
	// The worker keeps its group in the process cache; Go's heap grows to
	// twice what is live before it collects.
	if mem := int64(worker.Limits.MemoryMB) << 20; mem < 2*vector.DefaultCacheBytes {
		t.Errorf("the worker has %d MB, less than twice the %d MiB cache that holds its group", worker.Limits.MemoryMB, vector.DefaultCacheBytes>>20)
	}
}

// The pipeline functions' timeout is the pipeline's own limit, which package
// rag applies to each call: the catalog states it without importing rag.
// (The chat, which runs the pipeline once among other calls, has its own.)
func TestThePipelineFunctionsTimeoutIsThePipelines(t *testing.T) {
	for _, f := range catalog.Default().Functions() {
		if f.Pipeline && strings.HasPrefix(f.Path, "rag/") && f.Limits.Timeout != rag.DefaultLimits.Timeout {
			t.Errorf("%s has timeout %v, package rag's pipelines %v", f.Path, f.Limits.Timeout, rag.DefaultLimits.Timeout)
		}
	}
}

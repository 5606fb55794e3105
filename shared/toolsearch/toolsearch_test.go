package toolsearch_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/toolsearch"
)

// catalogDocs returns the catalog's public tools as hosts see them.
func catalogDocs() []toolsearch.Doc {
	var docs []toolsearch.Doc
	for _, t := range catalog.Default().Tools() {
		if t.Visibility == catalog.Public {
			docs = append(docs, toolsearch.Doc{Name: t.Name, Title: t.Title, Description: t.Description})
		}
	}
	return docs
}

// queries are what a host's model might ask for, and the tool that does it.
var queries = []struct {
	query, want string
}{
	{"add a message to a conversation", "memory_add_message"},
	{"create a new vector store", "vector_store_create"},
	{"which vector stores can I search", "optimizer_vs-storage"},
	{"show the audit trail of a request", "get_audit_trace"},
	{"upload a resume", "ingest_resume"},
	{"register an external MCP server", "connector_create"},
}

func TestTheToolThatDoesItRanksFirst(t *testing.T) {
	docs := catalogDocs()
	for _, searcher := range []struct {
		name string
		s    *toolsearch.Searcher
	}{
		{"by BM25", toolsearch.New(nil)},
		{"by BM25 and the offline embedder", toolsearch.New(offline.NewEmbedder(offline.DefaultDims))},
	} {
		for _, q := range queries {
			t.Run(searcher.name+"/"+q.query, func(t *testing.T) {
				hits, err := searcher.s.Search(context.Background(), q.query, docs, 3)
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, h := range hits {
					names = append(names, docs[h.Index].Name)
				}
				if len(names) == 0 || names[0] != q.want {
					t.Errorf("top 3 = %q, want %s first", names, q.want)
				}
			})
		}
	}
}

func TestSearchBoundsItsInput(t *testing.T) {
	s := toolsearch.New(nil)
	tests := []struct {
		name  string
		query string
		k     int
		field string
	}{
		{"an empty query", "  ", 5, "query"},
		{"a query too long", string(make([]byte, toolsearch.MaxQueryBytes+1)), 5, "query"},
		{"k of zero", "memory", 0, "k"},
		{"k past the maximum", "memory", toolsearch.MaxK + 1, "k"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Search(context.Background(), tt.query, catalogDocs(), tt.k)
			if _, field, _ := fault.Public(err); fault.KindOf(err) != fault.KindInvalid || field != tt.field {
				t.Errorf("Search = %v, want invalid %s", err, tt.field)
			}
		})
	}
	hits, err := s.Search(context.Background(), "memory", catalogDocs(), 2)
	if err != nil || len(hits) != 2 {
		t.Errorf("k=2 gave %d hits, %v", len(hits), err)
	}
	if hits, _ := s.Search(context.Background(), "zzzyzx", catalogDocs(), 5); len(hits) != 0 {
		t.Errorf("a query sharing no term found %d tools", len(hits))
	}
}

// BenchmarkSearch times one search over the catalog's public tools and 500
// proxied ones, as a tenant with many connectors has them:
// go test -run '^$' -bench Search ./shared/toolsearch/
func BenchmarkSearch(b *testing.B) {
	docs := catalogDocs()
	for i := range 500 {
		docs = append(docs, toolsearch.Doc{Name: fmt.Sprintf("conn%d__tool_%d", i%20, i), Title: fmt.Sprintf("Upstream tool %d", i),
			Description: fmt.Sprintf("Does upstream thing number %d for the connector's service: reads records, files and issues of kind %d.", i, i%7)})
	}
	for _, s := range []struct {
		name string
		s    *toolsearch.Searcher
	}{{"bm25", toolsearch.New(nil)}, {"bm25+offline-embedder", toolsearch.New(offline.NewEmbedder(offline.DefaultDims))}} {
		b.Run(fmt.Sprintf("%s/%d-tools", s.name, len(docs)), func(b *testing.B) {
			for b.Loop() {
				if _, err := s.s.Search(context.Background(), "add a message to a conversation", docs, 5); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestConcurrentSearchesAgree(t *testing.T) {
	s := toolsearch.New(offline.NewEmbedder(offline.DefaultDims))
	docs := catalogDocs()
	want, err := s.Search(context.Background(), queries[0].query, docs, 3)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			q := queries[i%len(queries)]
			hits, err := s.Search(context.Background(), q.query, docs, 3)
			if err != nil || len(hits) == 0 || docs[hits[0].Index].Name != q.want {
				t.Errorf("concurrent search %q: %v, %v", q.query, hits, err)
			}
		})
	}
	wg.Wait()
	if again, _ := s.Search(context.Background(), queries[0].query, docs, 3); !slices.Equal(again, want) {
		t.Errorf("after concurrent searches: %v, want %v", again, want)
	}
}

package lambdafn

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/pipeline"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/quota"
	"github.com/switchboard-dev/switchboard/shared/store"
)

// allOpeners open stand-ins, without I/O.
var allOpeners = Openers{
	Blobs: func(context.Context, *config.Config) (store.Blobs, error) { return nil, nil },
	Providers: func(context.Context, *config.Config, io.Writer) (provider.Embedder, provider.Generator, error) {
		return offline.NewEmbedder(offline.DefaultDims), offline.NewGenerator(), nil
	},
	Pipeline: func(context.Context, *config.Config) (pipeline.Runner, error) { return nil, nil },
	Invoker:  func(context.Context, *config.Config) (invoke.Invoker, error) { return nil, nil },
}

// A function's main must open what its catalog entry says it uses; what it
// may open beyond that is the link allow-list test's business.
func TestStartRefusesAMainThatOpensLessThanTheCatalogSays(t *testing.T) {
	for _, tc := range []struct {
		name    string
		path    string
		openers Openers
		missing []string
	}{
		{"a memory function needs no opener", "memory/add_message", Openers{}, nil},
		{"the retriever needs blobs, providers and an invoker", "vector/retriever", Openers{},
			[]string{"Blobs opener", "Providers opener", "Invoker opener"}},
		{"a pipeline tool needs providers and the pipeline's runner", "rag/basic", Openers{Blobs: allOpeners.Blobs},
			[]string{"Providers opener", "Pipeline opener"}},
		{"with every opener", "vector/retriever", allOpeners, nil},
		{"a function the catalog lacks", "vector/nowhere", allOpeners, []string{"not in the catalog"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config.Local(filepath.Join(t.TempDir(), "data"))
			_, closeFn, err := start(context.Background(), catalog.Default(), Function{Path: tc.path}, tc.openers, &cfg, io.Discard)
			if err == nil {
				closeFn()
			}
			if (err != nil) != (tc.missing != nil) {
				t.Fatalf("start: %v; want an error naming %v", err, tc.missing)
			}
			for _, m := range tc.missing {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("start: %v; want it to name %s", err, m)
				}
			}
		})
	}
}

func TestStartOpensTheTableAndWhatItsOpenersOpen(t *testing.T) {
	for _, tc := range []struct {
		path       string
		summarises bool
	}{{"memory/add_message", true}, {"vector/retriever", false}} {
		t.Run(tc.path, func(t *testing.T) {
			cfg := config.Local(filepath.Join(t.TempDir(), "data"))
			var warn bytes.Buffer
			d, closeFn, err := start(context.Background(), catalog.Default(), Function{Path: tc.path}, allOpeners, &cfg, &warn)
			if err != nil {
				t.Fatal(err)
			}
			defer closeFn()
			if d.Table == nil || d.Embedder == nil || d.Generator == nil {
				t.Errorf("Deps %+v: want the table and the providers opened", d)
			}
			if got := strings.Contains(warn.String(), OfflineSummariesWarning); got != tc.summarises {
				t.Errorf("the offline summariser announced: %v, want %v (%q)", got, tc.summarises, warn.String())
			}
		})
	}
}

func TestOpenReadsTheDeploymentsQuotas(t *testing.T) {
	cfg := config.Local(filepath.Join(t.TempDir(), "data"))
	cfg.Quotas = "store_documents=7 tenant_bytes=1GiB"
	d, closeFn, err := Open(context.Background(), &cfg, Openers{}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	closeFn()
	if d.Quotas == nil || d.Quotas.Store.Documents != 7 || d.Quotas.Tenant.Bytes != 1<<30 || d.Quotas.Store.Chunks != quota.DefaultLimits.Store.Chunks {
		t.Errorf("quotas %+v: want store_documents 7 and tenant_bytes 1 GiB over the defaults", d.Quotas)
	}
	cfg.Quotas = "store_documents=many"
	if _, _, err := Open(context.Background(), &cfg, Openers{}, io.Discard); err == nil || !strings.Contains(err.Error(), config.EnvQuotas+": quotas: store_documents") {
		t.Errorf("a bad specification gave %v, want an error naming %s and the quota", err, config.EnvQuotas)
	}
}

// A function gets Lambda's SIGTERM from the extension it registered beside
// its start, and listens for the signal itself.
func TestAFunctionShutsDownOnSIGTERM(t *testing.T) {
	done := make(chan struct{})
	onSIGTERM(func() { close(done) })
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("shutdown did not run on SIGTERM")
	}
}

package quota_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/quota"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

func newTenant() string { return strings.ToLower(rand.Text()) }

// ingest stands for a store's commit: a document record and the quota's
// writes in one transaction, retried on a lost race as the vector package
// retries its manifest commits.
func ingest(ctx context.Context, tbl store.Table, q *quota.Quotas, tn, alias, doc string, delta quota.Usage) error {
	return store.Retry(ctx, func() error {
		writes, err := q.Charge(ctx, tn, alias, delta)
		if err != nil {
			return err
		}
		rec := store.Put(store.Item{PK: tenant.Key(tn) + "vs#" + alias, SK: "doc#" + doc, Attrs: store.Attrs{"chunks": delta.Chunks}}, store.IfAbsent())
		return tbl.Transact(ctx, append(writes, rec)...)
	})
}

func TestChargeRefusesWhatPassesAQuotaAndSaysWhy(t *testing.T) {
	lim := quota.Limits{Store: quota.Usage{Documents: 3, Bytes: 10 << 20}, Tenant: quota.Usage{Chunks: 100}}
	tests := []struct {
		name   string
		before []quota.Usage // admitted first, each into store "docs"
		alias  string
		delta  quota.Usage
		want   string // "" admits
	}{
		{"a change within every quota passes", nil, "docs", quota.Usage{Documents: 1, Chunks: 10, Bytes: 1 << 20}, ""},
		{"a store's documents are counted", []quota.Usage{{Documents: 3}}, "docs", quota.Usage{Documents: 1},
			`store "docs" would pass its quota of 3 documents: it holds 3 and this change adds 1; delete some or ask the operator for a larger quota`},
		{"a store's bytes are counted in binary units", []quota.Usage{{Bytes: 9 << 20}}, "docs", quota.Usage{Bytes: 2 << 20},
			`store "docs" would pass its quota of 10.0 MiB stored: it holds 9.0 MiB and this change adds 2.0 MiB; delete some or ask the operator for a larger quota`},
		{"the tenant's chunks are counted across stores", []quota.Usage{{Chunks: 90}}, "other", quota.Usage{Chunks: 20},
			`tenant %q would pass its quota of 100 chunks: it holds 90 and this change adds 20; delete some or ask the operator for a larger quota`},
		{"a change up to the quota exactly passes", []quota.Usage{{Chunks: 90}}, "other", quota.Usage{Chunks: 10}, ""},
		{"a delete is never refused", []quota.Usage{{Documents: 3}}, "docs", quota.Usage{Documents: -1, Chunks: -5}, ""},
	}
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				ctx := context.Background()
				q := quota.New(tbl, &quota.Options{Defaults: &lim})
				tn := newTenant()
				for i, u := range tt.before {
					if err := ingest(ctx, tbl, q, tn, "docs", fmt.Sprint("before", i), u); err != nil {
						t.Fatal(err)
					}
				}
				storeBefore, tenantBefore, err := q.Usage(ctx, tn, tt.alias)
				if err != nil {
					t.Fatal(err)
				}
				err = ingest(ctx, tbl, q, tn, tt.alias, "doc", tt.delta)
				storeAfter, tenantAfter, _ := q.Usage(ctx, tn, tt.alias)
				if tt.want == "" {
					if err != nil {
						t.Fatalf("refused: %v", err)
					}
					if want := storeBefore.Add(tt.delta); storeAfter != want && tt.delta.Documents >= 0 {
						t.Errorf("store usage = %+v, want %+v", storeAfter, want)
					}
					return
				}
				if fault.KindOf(err) != fault.KindQuotaExceeded {
					t.Fatalf("error = %v, want kind %s", err, fault.KindQuotaExceeded)
				}
				if _, _, msg := fault.Public(err); msg != strings.ReplaceAll(tt.want, "%q", `"`+tn+`"`) {
					t.Errorf("message = %q\nwant      %q", msg, strings.ReplaceAll(tt.want, "%q", `"`+tn+`"`))
				}
				if storeAfter != storeBefore || tenantAfter != tenantBefore {
					t.Errorf("a refused change moved usage: store %+v -> %+v, tenant %+v -> %+v", storeBefore, storeAfter, tenantBefore, tenantAfter)
				}
			})
		}
	})
}

func TestConcurrentChargesLoseNothingAndNeverPassTheQuota(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		ctx := context.Background()
		lim := quota.Limits{Store: quota.Usage{Documents: 12}}
		q := quota.New(tbl, &quota.Options{Defaults: &lim})
		tn := newTenant()
		var admitted atomic.Int64
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Go(func() {
				err := ingest(ctx, tbl, q, tn, "docs", fmt.Sprint(i), quota.Usage{Documents: 1, Chunks: 2, Bytes: 100})
				switch {
				case err == nil:
					admitted.Add(1)
				case fault.KindOf(err) != fault.KindQuotaExceeded:
					t.Errorf("ingest %d: %v", i, err)
				}
			})
		}
		wg.Wait()
		s, tu, err := q.Usage(ctx, tn, "docs")
		if err != nil {
			t.Fatal(err)
		}
		want := quota.Usage{Documents: 12, Chunks: 24, Bytes: 1200}
		if admitted.Load() != 12 || s != want || tu != want {
			t.Errorf("%d of 20 ingests admitted; usage store %+v, tenant %+v; want 12 admitted and %+v", admitted.Load(), s, tu, want)
		}
	})
}

func TestDropForgetsADeletedStore(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		ctx := context.Background()
		q := quota.New(tbl, nil)
		tn := newTenant()
		for _, alias := range []string{"a", "b"} {
			if err := ingest(ctx, tbl, q, tn, alias, "doc", quota.Usage{Documents: 1, Chunks: 5, Bytes: 50}); err != nil {
				t.Fatal(err)
			}
		}
		writes, err := q.Drop(ctx, tn, "a")
		if err != nil {
			t.Fatal(err)
		}
		if err := tbl.Transact(ctx, writes...); err != nil {
			t.Fatal(err)
		}
		s, tu, _ := q.Usage(ctx, tn, "a")
		if s != (quota.Usage{}) || tu != (quota.Usage{Documents: 1, Chunks: 5, Bytes: 50}) {
			t.Errorf("after dropping a: store a %+v, tenant %+v; want nothing and b's usage", s, tu)
		}
		if writes, err := q.Drop(ctx, tn, "a"); err != nil || writes != nil {
			t.Errorf("dropping again: %v, %v; want nothing to write", writes, err)
		}
	})
}

func TestAnOverrideChangesOneTenantsQuotas(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		ctx := context.Background()
		lim := quota.Limits{Store: quota.Usage{Documents: 1}}
		q := quota.New(tbl, &quota.Options{Defaults: &lim})
		big, small := newTenant(), newTenant()
		if err := quota.SetOverride(ctx, tbl, big, quota.Limits{Store: quota.Usage{Documents: 2}}); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			tn   string
			want int
		}{{big, 2}, {small, 1}} {
			n := 0
			for i := range 3 {
				if err := ingest(ctx, tbl, q, tc.tn, "docs", fmt.Sprint(i), quota.Usage{Documents: 1}); err == nil {
					n++
				}
			}
			if n != tc.want {
				t.Errorf("tenant %s stored %d documents, want %d", tc.tn, n, tc.want)
			}
		}
		if err := quota.SetOverride(ctx, tbl, big, quota.Limits{Tenant: quota.Usage{Bytes: -1}}); err == nil {
			t.Error("SetOverride accepted a negative quota")
		}
		if err := quota.ClearOverride(ctx, tbl, big); err != nil {
			t.Fatal(err)
		}
		err := ingest(ctx, tbl, q, big, "docs", "more", quota.Usage{Documents: 1})
		if fault.KindOf(err) != fault.KindQuotaExceeded {
			t.Errorf("after clearing the override: %v, want the default quota's refusal", err)
		}
	})
}

func TestParseLimitsReadsTheDeploymentsDefaults(t *testing.T) {
	tests := []struct {
		name, spec string
		want       quota.Limits
		err        string
	}{
		{"an empty spec keeps the base", "", quota.DefaultLimits, ""},
		{"each key sets its quota and bytes take binary units", "store_documents=10, store_bytes=3MiB tenant_bytes=1TiB tenant_chunks=0",
			quota.Limits{Store: quota.Usage{Documents: 10, Chunks: quota.DefaultLimits.Store.Chunks, Bytes: 3 << 20},
				Tenant: quota.Usage{Documents: quota.DefaultLimits.Tenant.Documents, Bytes: 1 << 40}}, ""},
		{"an unknown key is named", "store_docs=1", quota.Limits{}, `unknown quota "store_docs"`},
		{"a negative count is refused", "tenant_documents=-1", quota.Limits{}, `tenant_documents: "-1" is not a count`},
		{"a unit on a count is refused", "store_chunks=1KiB", quota.Limits{}, `store_chunks: "1KiB" is not a count`},
		{"a size past int64 is refused", "store_bytes=9000000000TiB", quota.Limits{}, `store_bytes: "9000000000" is not a size`},
		{"a field without = is refused", "store_bytes", quota.Limits{}, `"store_bytes" is not key=value`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := quota.ParseLimits(tt.spec, quota.DefaultLimits)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

// TestOverridesAreReadFromTheirOwnTable: a function whose table client is
// scoped to the tenant reads the operators' overrides through a client of
// its own.
func TestOverridesAreReadFromTheirOwnTable(t *testing.T) {
	ctx := context.Background()
	usage, own := storetest.OpenEmbedded(t), storetest.OpenEmbedded(t)
	tn := newTenant()
	if err := quota.SetOverride(ctx, own, tn, quota.Limits{Store: quota.Usage{Documents: 1}}); err != nil {
		t.Fatal(err)
	}
	q := quota.New(usage, &quota.Options{Overrides: own})
	if err := ingest(ctx, usage, q, tn, "docs", "a", quota.Usage{Documents: 1}); err != nil {
		t.Fatal(err)
	}
	err := ingest(ctx, usage, q, tn, "docs", "b", quota.Usage{Documents: 1})
	if fault.KindOf(err) != fault.KindQuotaExceeded {
		t.Errorf("the second document: %v, want the override's quota_exceeded", err)
	}
}

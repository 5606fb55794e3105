package storetest

import (
	"path/filepath"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/embedded"
)

// A TableBackend opens a [store.Table] for one test; the table is closed or
// cleaned up by the test's cleanup functions.
type TableBackend struct {
	Name string
	Open func(t *testing.T) store.Table
}

// TableBackends returns every Table backend this test run can reach. The
// embedded backend is always there; the others need the services the
// project's test command starts, and are reported as skipped, with that
// command, when their service is absent.
func TableBackends(t *testing.T) []TableBackend {
	t.Helper()
	return []TableBackend{{Name: "embedded", Open: OpenEmbedded}}
}

// EachTable runs fn once per backend in [TableBackends], each in its own subtest
// named after the backend.
func EachTable(t *testing.T, fn func(t *testing.T, tbl store.Table)) {
	t.Helper()
	for _, b := range TableBackends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Logf("table backend: %s", b.Name)
			fn(t, b.Open(t))
		})
	}
}

// OpenEmbedded opens an embedded table in a temporary folder.
func OpenEmbedded(t *testing.T) store.Table {
	t.Helper()
	tbl, err := embedded.Open(filepath.Join(t.TempDir(), "switchboard.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tbl.Close() })
	return tbl
}

package catalog

import "testing"

// BenchmarkDefault measures building the default catalog, which every
// function does at its cold start.
func BenchmarkDefault(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		buildDefault()
	}
}

// Default's entries are fixed, so [Default] does not check them at each
// cold start: this test does, as [New] and [Catalog.WithTriggers] would.
func TestDefaultEntriesPassNewsChecks(t *testing.T) {
	if _, err := build(defaultEntries()); err != nil {
		t.Fatal(err)
	}
}

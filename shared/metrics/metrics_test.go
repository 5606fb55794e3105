package metrics_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/metrics"
)

// record is an EMF record as CloudWatch reads it.
type record struct {
	AWS struct {
		Timestamp         int64
		CloudWatchMetrics []struct {
			Namespace  string
			Dimensions [][]string
			Metrics    []struct{ Name, Unit string }
		}
	} `json:"_aws"`
	members map[string]any
}

// extracted is what CloudWatch extracts from a record: for each metric, the
// dimension sets it is published under (as "Family=memory,Function=x") and
// its value.
type extracted map[string]struct {
	Unit  string
	Value float64
	Dims  []string
}

// parse reads the records in out, checking each against the specification:
// one JSON object per line, the namespace ours, every dimension a string
// member and every metric a number member of the root.
func parse(t *testing.T, out string) []extracted {
	t.Helper()
	var all []extracted
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var r record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("record %q is not JSON: %v", sc.Text(), err)
		}
		json.Unmarshal(sc.Bytes(), &r.members)
		if r.AWS.Timestamp <= 0 || len(r.AWS.CloudWatchMetrics) == 0 {
			t.Fatalf("record %s has no timestamp or no directive", sc.Text())
		}
		x := extracted{}
		for _, d := range r.AWS.CloudWatchMetrics {
			if d.Namespace != metrics.Namespace {
				t.Errorf("namespace %q", d.Namespace)
			}
			var sets []string
			for _, set := range d.Dimensions {
				var kv []string
				for _, dim := range set {
					v, ok := r.members[dim].(string)
					if !ok {
						t.Fatalf("dimension %s is not a string member of %s", dim, sc.Text())
					}
					kv = append(kv, dim+"="+v)
				}
				sets = append(sets, strings.Join(kv, ","))
			}
			for _, m := range d.Metrics {
				v, ok := r.members[m.Name].(float64)
				if !ok {
					t.Fatalf("metric %s is not a number member of %s", m.Name, sc.Text())
				}
				e := x[m.Name]
				e.Unit, e.Value, e.Dims = m.Unit, v, append(e.Dims, sets...)
				x[m.Name] = e
			}
		}
		all = append(all, x)
	}
	return all
}

func TestACallRecordsItsFiguresByFamilyAndFunction(t *testing.T) {
	var out bytes.Buffer
	m := metrics.New(&out)
	m.Call(metrics.Call{Family: "memory", Function: "memory_add_message", Latency: 12345 * time.Microsecond, Tenant: "acme", TraceID: "t1", RequestID: "r1", XRayTraceID: "1-5759e988-bd862e3fe1be46a994272793"})
	m.Call(metrics.Call{Family: "memory", Function: "memory_add_message", Latency: time.Millisecond, Kind: fault.KindInvalid, Tenant: "acme"})
	m.Call(metrics.Call{Family: "rag", Function: "rag_basic", Latency: time.Millisecond, Kind: fault.KindUnavailable})
	m.Call(metrics.Call{Family: "vector", Function: "vector_search", Kind: fault.KindRateLimited})
	got := parse(t, out.String())
	byFunction := []string{"Family=memory", "Family=memory,Function=memory_add_message"}
	count := func(v float64, dims []string) struct {
		Unit  string
		Value float64
		Dims  []string
	} {
		return struct {
			Unit  string
			Value float64
			Dims  []string
		}{"Count", v, dims}
	}
	want := []extracted{
		{"Calls": count(1, byFunction), "Errors": count(0, byFunction), "Faults": count(0, byFunction), "Throttles": count(0, byFunction),
			"ColdStarts": count(1, byFunction), "AuditFailures": count(0, byFunction), "Latency": {"Milliseconds", 12.345, byFunction}},
		{"Calls": count(1, byFunction), "Errors": count(1, byFunction), "Faults": count(0, byFunction), "Throttles": count(0, byFunction),
			"ColdStarts": count(0, byFunction), "AuditFailures": count(0, byFunction), "Latency": {"Milliseconds", 1, byFunction},
			"ErrorsByKind": count(1, []string{"Family=memory,ErrorKind=invalid_argument"})},
	}
	if diff := cmp.Diff(want, got[:2]); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
	if got[2]["Faults"].Value != 1 || got[2]["ErrorsByKind"].Dims[0] != "Family=rag,ErrorKind=unavailable" {
		t.Errorf("an unavailable failure is a fault: %+v", got[2])
	}
	if got[3]["Throttles"].Value != 1 || got[3]["Faults"].Value != 0 || got[3]["Errors"].Value != 1 {
		t.Errorf("a rate_limited failure is a throttle: %+v", got[3])
	}
	// The tenant, the traces and the request are properties: in the record,
	// in no dimension.
	first := strings.SplitN(out.String(), "\n", 2)[0]
	for _, p := range []string{`"tenant":"acme"`, `"trace_id":"t1"`, `"request_id":"r1"`, `"xray_trace_id":"1-5759e988-bd862e3fe1be46a994272793"`} {
		if !strings.Contains(first, p) {
			t.Errorf("record %s lacks %s", first, p)
		}
	}
	if strings.Contains(first, `"Dimensions":[["tenant`) || strings.Contains(first, `,"tenant"]`) {
		t.Errorf("tenant is a dimension: %s", first)
	}
}

func TestRecordsWrittenForAFunctionTakeNoColdStart(t *testing.T) {
	var out bytes.Buffer
	m := metrics.New(&out)
	m.Throttled(metrics.Call{Family: "rag", Function: "rag_basic", Tenant: "acme"})
	m.Failed(metrics.Call{Family: "rag", Function: "rag_basic", Kind: fault.KindInternal})
	m.AuditFailed(metrics.Call{Family: "connectors", Function: "connector_call", Tenant: "acme", TraceID: "t1"})
	m.Call(metrics.Call{Family: "rag", Function: "rag_basic"})
	got := parse(t, out.String())
	if diff := cmp.Diff(extracted{"AuditFailures": {"Count", 1, []string{"Family=connectors", "Family=connectors,Function=connector_call"}}}, got[2]); diff != "" {
		t.Errorf("a lost audit event's record mismatch (-want +got):\n%s", diff)
	}
	got = append(got[:2], got[3:]...)
	if len(got[0]) != 2 || got[0]["Throttles"].Value != 1 || got[0]["ErrorsByKind"].Dims[0] != "Family=rag,ErrorKind=rate_limited" {
		t.Errorf("throttle record %+v, want Throttles and ErrorsByKind alone", got[0])
	}
	if got[1]["Faults"].Value != 1 || got[1]["ColdStarts"].Value != 0 {
		t.Errorf("a failure written for a function %+v, want a fault and no cold start", got[1])
	}
	if got[2]["ColdStarts"].Value != 1 {
		t.Errorf("a throttle or a failure written for a function took the instance's cold start")
	}
}

func TestConnectorEventsAreRecordedForTheFamilyWithTheConnectorAsAProperty(t *testing.T) {
	if metrics.ConnectorsFamily != catalog.ConnectorFamily {
		t.Fatalf("ConnectorsFamily %q, the catalog's %q", metrics.ConnectorsFamily, catalog.ConnectorFamily)
	}
	var out bytes.Buffer
	m := metrics.New(&out)
	m.ConnectorCall("acme", "github", 2500*time.Microsecond, true)
	for _, n := range []string{metrics.CacheHits, metrics.CacheMisses, metrics.ApprovalsRequested, metrics.ApprovalsGranted, metrics.ApprovalsDenied, metrics.ApprovalsExpired, "NotAMetric"} {
		m.ConnectorCount("acme", "github", n)
	}
	got := parse(t, out.String())
	if len(got) != 7 {
		t.Fatalf("%d records, want 7 (an unknown metric writes none):\n%s", len(got), out.String())
	}
	fam := []string{"Family=connectors"}
	if diff := cmp.Diff(extracted{
		"ConnectorCalls":   {"Count", 1, fam},
		"ConnectorErrors":  {"Count", 1, fam},
		"ConnectorLatency": {"Milliseconds", 2.5, fam},
	}, got[0]); diff != "" {
		t.Errorf("call record mismatch (-want +got):\n%s", diff)
	}
	if got[6]["ApprovalsExpired"].Value != 1 || !strings.Contains(out.String(), `"tenant":"acme","connector":"github"`) {
		t.Errorf("records %s", out.String())
	}
}

func TestANilEmitterWritesNothing(t *testing.T) {
	var m *metrics.Emitter
	m.Call(metrics.Call{Family: "memory"})
	m.Throttled(metrics.Call{Family: "memory"})
	m.AuditFailed(metrics.Call{Family: "memory"})
	m.ConnectorCall("acme", "x", 0, false)
	m.ConnectorCount("acme", "x", metrics.CacheHits)
}

func TestConcurrentRecordsAreWholeLines(t *testing.T) {
	var out bytes.Buffer
	m := metrics.New(&out)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 50 {
				m.Call(metrics.Call{Family: "memory", Function: "memory_get_context", Tenant: strings.Repeat("t", i+1), Kind: fault.KindNotFound})
			}
		})
	}
	wg.Wait()
	got := parse(t, out.String())
	cold := 0
	for _, r := range got {
		cold += int(r["ColdStarts"].Value)
	}
	if len(got) != 400 || cold != 1 {
		t.Errorf("%d records with %d cold starts, want 400 with 1", len(got), cold)
	}
}

// A record's strings are escaped: a tenant's text cannot break the line.
func TestPropertiesAreEscaped(t *testing.T) {
	var out bytes.Buffer
	metrics.New(&out).ConnectorCall("acme", "a\"b\n}", 0, false)
	if got := parse(t, out.String()); len(got) != 1 {
		t.Errorf("%q", out.String())
	}
}

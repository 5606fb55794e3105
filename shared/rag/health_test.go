package rag

import (
	"context"
	"encoding/binary"
	"errors"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/later"
	"github.com/switchboard-dev/switchboard/shared/pipeline"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

func TestPipelineStatusFromItsErrorRate(t *testing.T) {
	for _, tc := range []struct {
		name          string
		calls, errors int64
		want          string
	}{
		{"NoTrafficIsHealthy", 0, 0, Healthy},
		{"NoErrors", 10, 0, Healthy},
		{"JustBelowATenth", 100, 9, Healthy},
		{"ATenthIsDegraded", 10, 1, Degraded},
		{"JustBelowHalf", 100, 49, Degraded},
		{"HalfIsUnavailable", 10, 5, Unavailable},
		{"AllFailed", 3, 3, Unavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, _ := pipelineStatus(tc.calls, tc.errors); got != tc.want {
				t.Errorf("pipelineStatus(%d, %d) = %s, want %s", tc.calls, tc.errors, got, tc.want)
			}
		})
	}
}

func TestOverallStatusFollowsTheSeed(t *testing.T) {
	ps := func(statuses ...string) map[string]PipelineHealth {
		m := map[string]PipelineHealth{}
		for i, s := range statuses {
			m[Pipelines[i]] = PipelineHealth{Status: s}
		}
		return m
	}
	for _, tc := range []struct {
		name      string
		connected bool
		pipelines map[string]PipelineHealth
		want      string
	}{
		{"DatabaseDisconnected", false, ps(Healthy, Healthy, Healthy), Unavailable},
		{"AllHealthy", true, ps(Healthy, Healthy, Healthy), Healthy},
		{"AllUnavailable", true, ps(Unavailable, Unavailable, Unavailable), Unavailable},
		{"OneDegraded", true, ps(Healthy, Degraded, Healthy), Degraded},
		{"OneUnavailable", true, ps(Unavailable, Healthy, Healthy), Degraded},
		{"AllDegraded", true, ps(Degraded, Degraded, Degraded), Degraded},
		{"MixedUnhealthy", true, ps(Unavailable, Degraded, Unavailable), Degraded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := overallStatus(tc.connected, tc.pipelines); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

// clock is a settable time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

func TestHealthCountsTheLastHourOfCalls(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		ctx := context.Background()
		// Times near the real now: the table hides items past their real expiry.
		clk := &clock{t: time.Now().UTC().Add(-80 * time.Minute).Truncate(Bucket).Add(3 * time.Minute)}
		svc := New(tbl, Options{Now: clk.now, Generator: &testGen{}, Runner: &corpusRunner{}})
		c := tenant.Caller{Tenant: storetest.NewPrefix(t, tbl)[:8] + "x", Principal: "p"}
		t.Cleanup(func() { storetest.PurgePartition(t, tbl, healthPK(c)) })
		rec := func(pipeline string, ok, degraded bool, ms int) {
			if err := svc.health.record(ctx, c, pipeline, outcome{ok: ok, degraded: degraded, latency: time.Duration(ms) * time.Millisecond}); err != nil {
				t.Fatal(err)
			}
		}
		// Out of the window: 70 minutes before the check.
		rec(PipelineBasic, false, false, 0)
		clk.set(clk.now().Add(70 * time.Minute))
		for i := 1; i <= 20; i++ {
			rec(PipelineBasic, true, i%10 == 0, i*10) // 10..200 ms
		}
		rec(PipelineCRAG, true, false, 50)
		rec(PipelineCRAG, false, false, 0)
		clk.set(clk.now().Add(10 * time.Minute)) // another bucket, still inside the hour
		rec(PipelineBasic, false, false, 0)
		lastCRAG := clk.now()
		rec(PipelineCRAG, true, false, 70)

		h, err := svc.Health(ctx, c, HealthInput{})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]PipelineHealth{
			PipelineBasic:          {Status: Healthy, ErrorRate: 1.0 / 21, Queries: 21, Degraded: 2, P50MS: 100, P95MS: 190},
			PipelineBasicRerank:    {Status: Healthy},
			PipelineColbert:        {Status: Healthy},
			PipelineCRAG:           {Status: Degraded, ErrorRate: 1.0 / 3, Queries: 3, P50MS: 50, P95MS: 70, LastSuccess: lastCRAG.Format(time.RFC3339Nano)},
			PipelineGraphRAG:       {Status: Healthy},
			PipelineGlobalGraphRAG: {Status: Healthy},
		}
		got := h.PipelineStatuses
		if got[PipelineBasic].LastSuccess == "" {
			t.Errorf("basic has no last_success")
		}
		b := got[PipelineBasic]
		b.LastSuccess = ""
		got[PipelineBasic] = b
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("pipeline statuses mismatch (-want +got):\n%s", diff)
		}
		if h.OverallStatus != Degraded || !h.DatabaseStatus.Connected || h.DatabaseStatus.ResponseTimeMS < 0 || h.DatabaseStatus.ConnectionPoolUsage != "n/a" {
			t.Errorf("overall %s, database %+v", h.OverallStatus, h.DatabaseStatus)
		}
		pm := h.PerformanceMetrics
		if pm.ErrorRate != 2.0/24 || pm.QueriesPerMinute != 24.0/60 || pm.AverageResponseTimeMS != 90 || pm.P95ResponseTimeMS != 190 {
			t.Errorf("performance metrics %+v", pm)
		}
		if h.LastUpdated != clk.now().UTC().Format(time.RFC3339Nano) {
			t.Errorf("last_updated %s", h.LastUpdated)
		}
	})
}

func TestConcurrentCallsNeverLoseACount(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		ctx := context.Background()
		svc := New(tbl, Options{Generator: &testGen{}, Runner: &corpusRunner{}})
		c := tenant.Caller{Tenant: storetest.NewPrefix(t, tbl)[:8] + "y", Principal: "p"}
		t.Cleanup(func() { storetest.PurgePartition(t, tbl, healthPK(c)) })
		const n = 100
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				if err := svc.health.record(ctx, c, PipelineBasic, outcome{ok: i%4 != 0, latency: time.Duration(i) * time.Millisecond}); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		h, err := svc.Health(ctx, c, HealthInput{})
		if err != nil {
			t.Fatal(err)
		}
		st := h.PipelineStatuses[PipelineBasic]
		if st.Queries != n || st.ErrorRate != 0.25 {
			t.Errorf("%+v, want %d queries with error rate 0.25 (unless they straddled a bucket boundary, which still sums)", st, n)
		}
		if got := storetest.CountItems(t, tbl, healthPK(c), PipelineBasic+"#"); got < 1 || got > 2 {
			t.Errorf("%d bucket items", got)
		}
	})
}

// flakyTable fails its first Get, as a read cut short by the call's end does.
type flakyTable struct {
	store.Table
	failed bool
}

func (f *flakyTable) Get(ctx context.Context, pk, sk string) (store.Item, error) {
	if !f.failed {
		f.failed = true
		return store.Item{}, errUnreachable
	}
	return f.Table.Get(ctx, pk, sk)
}

func TestARecordReadAheadOfItsCallLosesNothing(t *testing.T) {
	start := time.Now().UTC().Truncate(Bucket)
	tests := []struct {
		name   string
		flaky  bool
		before int           // successes recorded before the call's read
		others int           // failures recorded between its read and its write
		ends   time.Duration // when the call ends, after its bucket starts
		want   [2][2]int64   // successes and failures of the call's bucket and the next
	}{
		{"nothing meanwhile", false, 0, 0, time.Minute, [2][2]int64{{1, 0}}},
		{"other calls wrote the bucket meanwhile", false, 2, 3, time.Minute, [2][2]int64{{3, 3}}},
		// The next bucket's version equals the one read: only the bucket tells them apart.
		{"the call ended in the next bucket", false, 2, 2, Bucket + time.Minute, [2][2]int64{{2, 0}, {1, 2}}},
		{"the read failed", true, 0, 0, time.Minute, [2][2]int64{{1, 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tbl store.Table = storetest.OpenEmbedded(t)
			clk := start
			r := &recorder{table: tbl, now: func() time.Time { return clk }}
			for range tt.before {
				if err := r.record(context.Background(), alice, PipelineBasic, outcome{ok: true}); err != nil {
					t.Fatal(err)
				}
			}
			if tt.flaky {
				r.table = &flakyTable{Table: tbl}
			}
			p := r.begin(context.Background(), alice, PipelineBasic)
			p.discard() // the read is done: the others come after it
			clk = start.Add(tt.ends)
			for range tt.others {
				if err := r.record(context.Background(), alice, PipelineBasic, outcome{}); err != nil {
					t.Fatal(err)
				}
			}
			if err := p.finish(context.Background(), outcome{ok: true, latency: time.Millisecond}); err != nil {
				t.Fatal(err)
			}
			var got [2][2]int64
			for i := range got {
				it, _ := tbl.Get(context.Background(), healthPK(alice), bucketKey(PipelineBasic, start.Add(time.Duration(i)*Bucket)))
				got[i] = [2]int64{it.Int("ok"), it.Int("errors")}
			}
			if got != tt.want {
				t.Errorf("successes and failures by bucket: got %v, want %v", got, tt.want)
			}
		})
	}
}

// bucket is one five-minute health counter as record leaves it: seen
// successful calls, of which the latencies (in ms) were kept.
type bucket struct {
	ago     time.Duration // before the check
	seen    int64
	latency []uint32
}

func TestPercentilesWeighEachBucketByItsTraffic(t *testing.T) {
	busy := func(ago time.Duration, ms uint32) bucket {
		return bucket{ago, 100 * SampleSize, slices.Repeat([]uint32{ms}, SampleSize)}
	}
	quiet := func(ago time.Duration, n int, ms uint32) bucket {
		return bucket{ago, int64(n), slices.Repeat([]uint32{ms}, n)}
	}
	for _, tc := range []struct {
		name     string
		buckets  []bucket
		p50, p95 int64
	}{
		// Unweighted, 192 samples of 100 ms against 64 of 1000 ms would give a p50 of 100.
		{"a busy slow bucket outweighs quiet fast ones", []bucket{busy(10*time.Minute, 1000), quiet(20*time.Minute, 64, 100), quiet(25*time.Minute, 64, 100), quiet(30*time.Minute, 64, 100)}, 1000, 1000},
		// Unweighted, 20 samples of 1000 ms among 84 would give a p95 of 1000.
		{"a quiet slow bucket does not set the p95", []bucket{busy(10*time.Minute, 100), quiet(20*time.Minute, 20, 1000)}, 100, 100},
		{"buckets of equal traffic count alike", []bucket{quiet(10*time.Minute, 10, 100), quiet(20*time.Minute, 10, 300)}, 100, 300},
	} {
		t.Run(tc.name, func(t *testing.T) {
			storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
				ctx := context.Background()
				now := time.Now().UTC()
				svc := New(tbl, Options{Now: func() time.Time { return now }, Generator: &testGen{}, Runner: &corpusRunner{}})
				c := tenant.Caller{Tenant: storetest.NewPrefix(t, tbl)[:8] + "w", Principal: "p"}
				t.Cleanup(func() { storetest.PurgePartition(t, tbl, healthPK(c)) })
				var calls int64
				for _, b := range tc.buckets {
					start := now.Add(-b.ago).Truncate(Bucket)
					var samples []byte
					for _, ms := range b.latency {
						samples = binary.LittleEndian.AppendUint32(samples, ms)
					}
					it := store.Item{PK: healthPK(c), SK: PipelineCRAG + "#" + start.Format(bucketLayout), ExpiresAt: start.Add(keep), Attrs: store.Attrs{
						"ok": b.seen, "errors": int64(0), "degraded": int64(0), "last_success": start.Format(time.RFC3339Nano), "seen": b.seen, "samples": samples, "ver": int64(1),
					}}
					if err := tbl.Put(ctx, it, store.IfAbsent()); err != nil {
						t.Fatal(err)
					}
					calls += b.seen
				}
				h, err := svc.Health(ctx, c, HealthInput{})
				if err != nil {
					t.Fatal(err)
				}
				st, pm := h.PipelineStatuses[PipelineCRAG], h.PerformanceMetrics
				if st.Queries != calls || st.P50MS != tc.p50 || st.P95MS != tc.p95 || pm.AverageResponseTimeMS != tc.p50 || pm.P95ResponseTimeMS != tc.p95 {
					t.Errorf("%d queries, p50 %d, p95 %d (all pipelines: %d, %d); want %d, %d, %d", st.Queries, st.P50MS, st.P95MS,
						pm.AverageResponseTimeMS, pm.P95ResponseTimeMS, calls, tc.p50, tc.p95)
				}
			})
		})
	}
}

func TestLatencySamplesStayBounded(t *testing.T) {
	tbl := storetest.OpenEmbedded(t)
	svc := New(tbl, Options{Generator: &testGen{}, Runner: &corpusRunner{}})
	clk := time.Now().UTC().Truncate(Bucket)
	svc.health.now = func() time.Time { return clk }
	for i := range 3 * SampleSize {
		if err := svc.health.record(context.Background(), alice, PipelineBasic, outcome{ok: true, latency: time.Duration(i) * time.Millisecond}); err != nil {
			t.Fatal(err)
		}
	}
	it, err := tbl.Get(context.Background(), healthPK(alice), PipelineBasic+"#"+clk.Format(bucketLayout))
	if err != nil {
		t.Fatal(err)
	}
	if got := len(it.Bytes("samples")); got != 4*SampleSize || it.Int("seen") != 3*SampleSize || it.Int("ok") != 3*SampleSize {
		t.Errorf("%d sample bytes, seen %d, ok %d", got, it.Int("seen"), it.Int("ok"))
	}
	if want := clk.Add(2 * time.Hour); !it.ExpiresAt.Equal(want) {
		t.Errorf("expires at %v, want %v", it.ExpiresAt, want)
	}
}

// brokenTable fails every call, as an unreachable DynamoDB does.
type brokenTable struct{ store.Table }

var errUnreachable = errors.New("dial tcp: connection refused")

func (brokenTable) Get(context.Context, string, string) (store.Item, error) {
	return store.Item{}, errUnreachable
}
func (brokenTable) Query(context.Context, string, store.Query) (store.Page, error) {
	return store.Page{}, errUnreachable
}
func (brokenTable) Put(context.Context, store.Item, store.Condition) error { return errUnreachable }

func TestHealthWithoutTheTableIsUnavailable(t *testing.T) {
	svc := New(brokenTable{}, Options{Generator: &testGen{}, Runner: &corpusRunner{}})
	h, err := svc.Health(context.Background(), alice, HealthInput{})
	if err != nil {
		t.Fatal(err)
	}
	if h.OverallStatus != Unavailable || h.DatabaseStatus.Connected || h.DatabaseStatus.Error == "" || len(h.PipelineStatuses) != len(Pipelines) {
		t.Errorf("got %+v", h)
	}
	// A pipeline call still answers when its outcome cannot be recorded.
	tbl := storetest.OpenEmbedded(t)
	gen := &testGen{}
	runner := &corpusRunner{steps: NewSteps(tbl, gen)}
	runner.add(alice.Tenant, medical...)
	svc = New(brokenTable{}, Options{Generator: gen, Runner: runner})
	if _, err := svc.Basic(context.Background(), alice, BasicInput{Request{Query: "diabetes"}}); err != nil {
		t.Errorf("the call failed because recording did: %v", err)
	}
}

// heldPuts is a table whose puts wait until released.
type heldPuts struct {
	store.Table
	release chan struct{}
}

func (h heldPuts) Put(ctx context.Context, it store.Item, c store.Condition) error {
	select {
	case <-h.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	return h.Table.Put(ctx, it, c)
}

// TestACallAnswersBeforeItsOutcomeIsRecordedAndHealthCountsIt: with a queue,
// the health record is written after the answer, off the caller's path, and
// a health check in the same process waits for it.
func TestACallAnswersBeforeItsOutcomeIsRecordedAndHealthCountsIt(t *testing.T) {
	_, runner, gen, tbl := newService(t, Options{})
	held := heldPuts{Table: tbl, release: make(chan struct{})}
	q := later.New()
	svc := New(held, Options{Generator: gen, Runner: runner, After: q})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := svc.Basic(ctx, alice, BasicInput{Request{Query: "What are the symptoms of diabetes?"}}); err != nil {
		t.Fatal(err) // answered although the record's put is held
	}
	short, stop := context.WithTimeout(ctx, 50*time.Millisecond)
	defer stop()
	if q.Wait(short) == nil {
		t.Fatal("the record was written before its put was released")
	}
	close(held.release)
	h, err := svc.Health(ctx, alice, HealthInput{})
	if err != nil {
		t.Fatal(err)
	}
	if n := h.PipelineStatuses[PipelineBasic].Queries; n != 1 {
		t.Errorf("health counts %d calls of rag_basic, want 1", n)
	}
}

func TestHealthReportsThePipelinesItIsGiven(t *testing.T) {
	tbl := storetest.OpenEmbedded(t)
	named := []string{PipelineBasic, "graphrag", "pylate_colbert"}
	svc := New(tbl, Options{Generator: &testGen{}, Runner: &corpusRunner{}, Pipelines: named})
	h, err := svc.Health(context.Background(), alice, HealthInput{})
	if err != nil {
		t.Fatal(err)
	}
	got := slices.Sorted(maps.Keys(h.PipelineStatuses))
	if want := slices.Sorted(slices.Values(named)); !slices.Equal(got, want) {
		t.Errorf("pipeline_statuses name %v, want %v", got, want)
	}
}

// healthReads is a table that signals each read of a health item.
type healthReads struct {
	store.Table
	reads chan struct{}
}

func (h healthReads) Get(ctx context.Context, pk, sk string) (store.Item, error) {
	if pk == healthPK(alice) {
		select {
		case h.reads <- struct{}{}:
		default:
		}
	}
	return h.Table.Get(ctx, pk, sk)
}

// watchingRunner is a runner that, before it runs, waits a little for a
// read of a health item and notes whether one came.
type watchingRunner struct {
	*corpusRunner
	reads  chan struct{}
	during chan bool
}

func (w watchingRunner) Run(ctx context.Context, in pipeline.Input) (pipeline.Output, error) {
	select {
	case <-w.reads:
		w.during <- true
	case <-time.After(200 * time.Millisecond):
		w.during <- false
	}
	return w.corpusRunner.Run(ctx, in)
}

// TestACallRecordedAfterItsAnswerReadsItsOutcomeAfterItToo: with a queue,
// the health item is not read while the call runs, where the read would
// compete with it (on a cold start, its first table request).
func TestACallRecordedAfterItsAnswerReadsItsOutcomeAfterItToo(t *testing.T) {
	_, runner, gen, tbl := newService(t, Options{})
	reads := make(chan struct{}, 1)
	watching := watchingRunner{corpusRunner: runner, reads: reads, during: make(chan bool, 1)}
	q := later.New()
	svc := New(healthReads{Table: tbl, reads: reads}, Options{Generator: gen, Runner: watching, After: q})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := svc.Basic(ctx, alice, BasicInput{Request{Query: "What are the symptoms of diabetes?"}}); err != nil {
		t.Fatal(err)
	}
	if <-watching.during {
		t.Error("the health item was read while the call ran")
	}
	if err := q.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	h, err := svc.Health(ctx, alice, HealthInput{})
	if err != nil {
		t.Fatal(err)
	}
	if n := h.PipelineStatuses[PipelineBasic].Queries; n != 1 {
		t.Errorf("health counts %d calls of rag_basic, want 1", n)
	}
}

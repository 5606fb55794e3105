package rag

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// Health recording: every pipeline call past validation adds to a counter
// item of its tenant, pipeline and five-minute bucket,
//
//	t#<tenant>#rag#health  <pipeline>#<bucket start, 20060102T1504>  ok, errors, degraded, last_success, seen, samples, ver
//
// expiring two hours after the bucket starts. A write reads the item and puts
// it back on condition that its ver is unchanged (or that it is still absent),
// retrying a lost race with [store.Retry], so concurrent calls never lose a
// count. samples holds up to [SampleSize] latencies of successful calls (in
// milliseconds, 4 bytes each) chosen by reservoir sampling over the seen
// ones, so percentiles stay unbiased at any traffic while an item stays small.
// Each kept sample stands for seen/len(samples) calls of its bucket, and the
// hour's percentiles weigh it so: a busy bucket counts for its traffic, not
// for its 64 samples.
const (
	// Bucket is the width of a health counter's time bucket.
	Bucket = 5 * time.Minute
	// Window is how far back rag_health_check looks.
	Window = time.Hour
	// SampleSize bounds the latencies kept per bucket.
	SampleSize = 64
	// keep is how long a bucket lives; past Window it is never read.
	keep = 2 * time.Hour
	// HealthyBelow and DegradedBelow are the error-rate thresholds of a
	// pipeline's status: healthy below 0.1 (or with no calls), degraded below
	// 0.5, else unavailable.
	HealthyBelow  = 0.1
	DegradedBelow = 0.5
)

const (
	healthSuffix = "rag#health"
	probeSK      = "probe"
	bucketLayout = "20060102T1504"
)

func healthPK(c tenant.Caller) string { return tenant.Key(c.Tenant) + healthSuffix }

// outcome is what one call contributes to the health counters.
type outcome struct {
	ok, degraded bool
	latency      time.Duration
}

// recorder writes and reads the health counters.
type recorder struct {
	table store.Table
	now   func() time.Time
}

// A pending record is one call's health record in the making. The read of
// its bucket's item starts with the call ([recorder.begin]) and runs
// concurrently with the pipeline and the answer, so that once the outcome is
// known only the conditional write is left on the call's path: one round
// trip instead of two. The write still lands before the call returns (a
// frozen Lambda runs nothing after its answer), and a write that lost a race
// reads again, so no count is lost.
type pending struct {
	r        *recorder
	c        tenant.Caller
	pipeline string
	sk       string // of the bucket read ahead
	done     chan struct{}
	cur      store.Item // what the read found, when err is nil
	err      error
}

// begin starts reading the item a call of pipeline arriving now adds to.
// The caller must end it with [pending.finish] or [pending.discard].
func (r *recorder) begin(ctx context.Context, c tenant.Caller, pipeline string) *pending {
	p := &pending{r: r, c: c, pipeline: pipeline, sk: bucketKey(pipeline, r.now()), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.cur, p.err = r.table.Get(ctx, healthPK(c), p.sk)
	}()
	return p
}

// record adds o to its bucket's counters at once: [recorder.begin] and
// [pending.finish] together.
func (r *recorder) record(ctx context.Context, c tenant.Caller, pipeline string, o outcome) error {
	return r.begin(ctx, c, pipeline).finish(ctx, o)
}

// discard waits for the read of a call that is not recorded.
func (p *pending) discard() { <-p.done }

// finish adds o to the counters of the bucket the call ends in, with a put
// conditional on the version it read: the read begun with the call when it
// is of the same bucket and succeeded (an absent item included), else a
// fresh one, as after a lost race.
func (p *pending) finish(ctx context.Context, o outcome) error {
	<-p.done
	now := p.r.now().UTC()
	start := now.Truncate(Bucket)
	pk, sk := healthPK(p.c), bucketKey(p.pipeline, now)
	ahead := sk == p.sk && (p.err == nil || errors.Is(p.err, store.ErrNotFound))
	return store.Retry(ctx, func() error {
		cur, err := p.cur, p.err
		if !ahead {
			cur, err = p.r.table.Get(ctx, pk, sk)
		}
		ahead = false
		cond := store.IfEquals("ver", cur.Int("ver"))
		if errors.Is(err, store.ErrNotFound) {
			cur, cond = store.Item{PK: pk, SK: sk, Attrs: store.Attrs{}}, store.IfAbsent()
		} else if err != nil {
			return err
		}
		a := store.Attrs{
			"ok": cur.Int("ok"), "errors": cur.Int("errors"), "degraded": cur.Int("degraded"),
			"last_success": cur.String("last_success"), "seen": cur.Int("seen"), "ver": cur.Int("ver") + 1,
		}
		samples := slices.Clone(cur.Bytes("samples"))
		if o.ok {
			a["ok"] = cur.Int("ok") + 1
			a["last_success"] = now.Format(time.RFC3339Nano)
			if o.degraded {
				a["degraded"] = cur.Int("degraded") + 1
			}
			seen := cur.Int("seen") + 1
			a["seen"] = seen
			ms := uint32(min(max(o.latency.Milliseconds(), 0), 1<<31))
			if n := len(samples) / 4; n < SampleSize {
				samples = binary.LittleEndian.AppendUint32(samples, ms)
			} else if j := rand.Int64N(seen); j < SampleSize {
				binary.LittleEndian.PutUint32(samples[4*j:], ms)
			}
		} else {
			a["errors"] = cur.Int("errors") + 1
		}
		if len(samples) > 0 {
			a["samples"] = samples
		}
		return p.r.table.Put(ctx, store.Item{PK: pk, SK: sk, Attrs: a, ExpiresAt: start.Add(keep)}, cond)
	})
}

// bucketKey is the sort key of pipeline's bucket holding time t.
func bucketKey(pipeline string, t time.Time) string {
	return pipeline + "#" + t.UTC().Truncate(Bucket).Format(bucketLayout)
}

// stats are one pipeline's counters over the window.
type stats struct {
	ok, errors, degraded int64
	lastSuccess          string
	samples              []sample
}

// sample is a latency kept in a bucket, and how many of the bucket's calls
// it stands for.
type sample struct {
	ms     int64
	weight float64
}

// read returns each pipeline's counters over the window ending now.
func (r *recorder) read(ctx context.Context, c tenant.Caller, now time.Time, pipelines []string) (map[string]*stats, error) {
	from := now.UTC().Add(-Window).Truncate(Bucket)
	out := map[string]*stats{}
	for _, p := range pipelines {
		out[p] = &stats{}
	}
	q := store.Query{Limit: store.MaxQueryLimit}
	for {
		page, err := r.table.Query(ctx, healthPK(c), q)
		if err != nil {
			return nil, err
		}
		for _, it := range page.Items {
			pipeline, bucket, ok := strings.Cut(it.SK, "#")
			st := out[pipeline]
			t, err := time.Parse(bucketLayout, bucket)
			if !ok || st == nil || err != nil || t.Before(from) {
				continue
			}
			st.ok += it.Int("ok")
			st.errors += it.Int("errors")
			st.degraded += it.Int("degraded")
			st.lastSuccess = max(st.lastSuccess, it.String("last_success"))
			b := it.Bytes("samples")
			n := int64(len(b) / 4)
			weight := float64(max(it.Int("seen"), n)) / float64(max(n, 1))
			for i := 0; i+4 <= len(b); i += 4 {
				st.samples = append(st.samples, sample{int64(binary.LittleEndian.Uint32(b[i:])), weight})
			}
		}
		if page.Next == "" {
			return out, nil
		}
		q.Cursor = page.Next
	}
}

// pipelineStatus is a pipeline's status from its calls and failures in the
// window: no calls is healthy; else by error rate against [HealthyBelow] and
// [DegradedBelow].
func pipelineStatus(calls, errors int64) (string, float64) {
	if calls == 0 {
		return Healthy, 0
	}
	rate := float64(errors) / float64(calls)
	switch {
	case rate < HealthyBelow:
		return Healthy, rate
	case rate < DegradedBelow:
		return Degraded, rate
	}
	return Unavailable, rate
}

// overallStatus is seed 002's status computation, exactly.
func overallStatus(connected bool, pipelines map[string]PipelineHealth) string {
	all := func(status string) bool {
		for _, p := range pipelines {
			if p.Status != status {
				return false
			}
		}
		return true
	}
	switch {
	case !connected:
		return Unavailable
	case all(Healthy):
		return Healthy
	case all(Unavailable):
		return Unavailable
	}
	return Degraded
}

// percentile returns the p-th percentile of samples (nearest rank, by
// weight): the least latency at or below which p percent of the calls the
// samples stand for fall. It sorts samples.
func percentile(samples []sample, p float64) int64 {
	if len(samples) == 0 {
		return 0
	}
	slices.SortFunc(samples, func(a, b sample) int { return cmp.Compare(a.ms, b.ms) })
	var total float64
	for _, s := range samples {
		total += s.weight
	}
	// The tolerance absorbs rounding, so that equal weights give the exact
	// nearest rank (0.95 * 20 is not quite 19 in floating point).
	target, cum := p/100*total-1e-9*total, 0.0
	for _, s := range samples {
		if cum += s.weight; cum >= target {
			return s.ms
		}
	}
	return samples[len(samples)-1].ms
}

// Health serves rag_health_check: seed 002's health status for the caller's
// pipelines, from their recorded calls in the last hour, and the table's
// health from one timed read. Without the table nothing can be measured, so
// every pipeline is then reported unavailable, as is the whole.
func (s *Service) Health(ctx context.Context, c tenant.Caller, _ HealthInput) (HealthOutput, error) {
	if s.after != nil {
		s.after.Wait(ctx) // this process's calls are counted once they have answered
	}
	now := s.now()
	out := HealthOutput{PipelineStatuses: map[string]PipelineHealth{}, LastUpdated: now.UTC().Format(time.RFC3339Nano)}
	db := DatabaseHealth{ConnectionPoolUsage: "n/a"}
	t0 := time.Now()
	_, err := s.table.Get(ctx, healthPK(c), probeSK)
	db.ResponseTimeMS = time.Since(t0).Milliseconds()
	var byPipeline map[string]*stats
	if err == nil || errors.Is(err, store.ErrNotFound) {
		byPipeline, err = s.health.read(ctx, c, now, s.pipelines)
	}
	if err != nil {
		if ctx.Err() != nil {
			return HealthOutput{}, fault.Unavailable(err, "the health check ran out of time")
		}
		db.Error = "the table did not answer; the server log has the details"
		s.log.ErrorContext(ctx, "health probe failed", "tenant", c.Tenant, "error", err)
		for _, p := range s.pipelines {
			out.PipelineStatuses[p] = PipelineHealth{Status: Unavailable}
		}
	} else {
		db.Connected = true
		var all []sample
		var calls, failed int64
		for _, p := range s.pipelines {
			st := byPipeline[p]
			n := st.ok + st.errors
			status, rate := pipelineStatus(n, st.errors)
			out.PipelineStatuses[p] = PipelineHealth{Status: status, LastSuccess: st.lastSuccess, ErrorRate: rate,
				Queries: n, Degraded: st.degraded, P50MS: percentile(st.samples, 50), P95MS: percentile(st.samples, 95)}
			all = append(all, st.samples...)
			calls, failed = calls+n, failed+st.errors
		}
		out.PerformanceMetrics = HealthMetrics{AverageResponseTimeMS: percentile(all, 50), P95ResponseTimeMS: percentile(all, 95),
			QueriesPerMinute: float64(calls) / Window.Minutes()}
		if calls > 0 {
			out.PerformanceMetrics.ErrorRate = float64(failed) / float64(calls)
		}
	}
	out.DatabaseStatus = db
	out.OverallStatus = overallStatus(db.Connected, out.PipelineStatuses)
	return out, nil
}

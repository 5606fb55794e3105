package connector

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/shared/metrics"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// maxLatencySamples bounds the latencies kept per connector (the newest).
const maxLatencySamples = 256

// counters are one connector's figures in this process.
type counters struct {
	calls, errors, cacheHits, cacheMisses int64
	latencies                             []time.Duration
	next                                  int
}

// stats keeps figures per warm process: they start at zero with each
// instance and are not summed across instances. Each figure is also written
// as a metric record, and CloudWatch sums those across instances.
type stats struct {
	mu sync.Mutex
	by map[string]*counters
	m  *metrics.Emitter
}

func newStats(m *metrics.Emitter) *stats { return &stats{by: map[string]*counters{}, m: m} }

func (st *stats) get(t, name string) *counters {
	k := t + "\x00" + name
	c := st.by[k]
	if c == nil {
		c = &counters{}
		st.by[k] = c
	}
	return c
}

func (st *stats) call(t, name string, d time.Duration, failed bool) {
	st.m.ConnectorCall(t, name, d, failed)
	st.mu.Lock()
	defer st.mu.Unlock()
	c := st.get(t, name)
	c.calls++
	if failed {
		c.errors++
	}
	if len(c.latencies) < maxLatencySamples {
		c.latencies = append(c.latencies, d)
	} else {
		c.latencies[c.next] = d
		c.next = (c.next + 1) % maxLatencySamples
	}
}

func (st *stats) cache(t, name string, hit bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if hit {
		st.get(t, name).cacheHits++
		st.m.ConnectorCount(t, name, metrics.CacheHits)
	} else {
		st.get(t, name).cacheMisses++
		st.m.ConnectorCount(t, name, metrics.CacheMisses)
	}
}

// approval writes the metric record of an approval that reached status;
// its durable count is the connector's stats item ([Service.countWrite]).
func (st *stats) approval(t, name, status string) {
	switch status {
	case ApprovalPending:
		st.m.ConnectorCount(t, name, metrics.ApprovalsRequested)
	case ApprovalGranted, ApprovalConsumed:
		st.m.ConnectorCount(t, name, metrics.ApprovalsGranted)
	case ApprovalDenied:
		st.m.ConnectorCount(t, name, metrics.ApprovalsDenied)
	case ApprovalExpired:
		st.m.ConnectorCount(t, name, metrics.ApprovalsExpired)
	}
}

// ConnectorHealth is one connector's health.
type ConnectorHealth struct {
	Name       string         `json:"name"`
	Status     string         `json:"status"`
	SyncStatus string         `json:"sync_status"`
	LastError  string         `json:"last_error,omitempty"`
	Sessions   map[string]int `json:"sessions" jsonschema:"this instance's pooled sessions by state"`
	Calls      int64          `json:"calls"`
	Errors     int64          `json:"errors"`
	P50Ms      float64        `json:"p50_ms"`
	P95Ms      float64        `json:"p95_ms"`
	CacheHits  int64          `json:"cache_hits"`
	CacheMiss  int64          `json:"cache_misses"`
	Approvals  ApprovalCounts `json:"approvals" jsonschema:"every instance's, stored"`
}

// ApprovalCounts counts approvals by outcome.
type ApprovalCounts struct {
	Requested int64 `json:"requested"`
	Granted   int64 `json:"granted"`
	Denied    int64 `json:"denied"`
	Expired   int64 `json:"expired"`
}

// HealthInput is the input of connector_health.
type HealthInput struct{}

// HealthOutput is the output of connector_health.
type HealthOutput struct {
	// Status is "up", or "down" when every connector is in ERROR (seed 001's rule).
	Status     string            `json:"status"`
	Connectors []ConnectorHealth `json:"connectors"`
	Total      int               `json:"total"`
	Connected  int               `json:"connected"`
	Errors     int               `json:"errors"`
	// Scope says where the figures come from.
	Scope string `json:"scope"`
}

// Health serves connector_health: statuses and approval counts from the
// table (durable, every instance's view), the other figures from this
// instance since it started.
func (s *Service) Health(ctx context.Context, c tenant.Caller, _ HealthInput) (HealthOutput, error) {
	if err := validateCaller(c); err != nil {
		return HealthOutput{}, err
	}
	out := HealthOutput{Status: "up", Connectors: []ConnectorHealth{},
		Scope: "statuses and approval counts are stored; calls, errors, latencies and cache counts are those of this instance of the proxy function since it started (CloudWatch has every instance's)"}
	for cursor := ""; ; {
		page, err := s.table.Query(ctx, connPK(c.Tenant), store.Query{Cursor: cursor, Limit: store.MaxQueryLimit})
		if err != nil {
			return HealthOutput{}, unavailable(err, "listing connectors failed; retry")
		}
		for _, it := range page.Items {
			r := recordFrom(it)
			h := ConnectorHealth{Name: r.Name, Status: r.Status, SyncStatus: r.SyncStatus, LastError: r.LastError,
				Sessions: s.pool.states(c.Tenant, r.Name)}
			if h.Approvals, err = s.approvalCounts(ctx, c.Tenant, r.Name); err != nil {
				return HealthOutput{}, err
			}
			s.stats.mu.Lock()
			if k := s.stats.by[c.Tenant+"\x00"+r.Name]; k != nil {
				h.Calls, h.Errors, h.CacheHits, h.CacheMiss = k.calls, k.errors, k.cacheHits, k.cacheMisses
				h.P50Ms, h.P95Ms = percentile(k.latencies, 0.50), percentile(k.latencies, 0.95)
			}
			s.stats.mu.Unlock()
			out.Connectors = append(out.Connectors, h)
			out.Total++
			switch r.Status {
			case StatusConnected:
				out.Connected++
			case StatusError:
				out.Errors++
			}
		}
		if cursor = page.Next; cursor == "" {
			break
		}
	}
	if out.Total > 0 && out.Errors == out.Total {
		out.Status = "down"
	}
	return out, nil
}

// percentile returns the q-quantile of ds in milliseconds (nearest rank).
func percentile(ds []time.Duration, q float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	sorted := slices.Clone(ds)
	slices.Sort(sorted)
	i := int(q*float64(len(sorted))+0.5) - 1
	i = max(0, min(i, len(sorted)-1))
	return float64(sorted[i].Microseconds()) / 1000
}

// OpenAIInput is the input of connector_tools_openai.
type OpenAIInput struct {
	IncludeSwitchboard bool `json:"include_switchboard,omitempty" jsonschema:"also return Switchboard's own public tools, first"`
}

// OpenAITool is a tool in OpenAI's function format.
type OpenAITool struct {
	Type     string         `json:"type"`
	Function OpenAIFunction `json:"function"`
}

// OpenAIFunction is the function of an [OpenAITool].
type OpenAIFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// OpenAIOutput is the output of connector_tools_openai.
type OpenAIOutput struct {
	Tools []OpenAITool `json:"tools"`
}

// ToolsOpenAI serves connector_tools_openai: the usable proxied tools
// (connected, cache valid, not denied) in OpenAI's function format, as seed
// 001's context builder made them, after Switchboard's own public tools
// ([Options].OwnTools) when in asks for them.
func (s *Service) ToolsOpenAI(ctx context.Context, c tenant.Caller, in OpenAIInput) (OpenAIOutput, error) {
	out := OpenAIOutput{Tools: []OpenAITool{}}
	if in.IncludeSwitchboard && s.opts.OwnTools != nil {
		out.Tools = append(out.Tools, s.opts.OwnTools()...)
	}
	err := s.eachUsable(ctx, c, func(r *record, ch *cache, denied map[string]bool) {
		for _, t := range ch.Tools {
			if denied[t.Name] {
				continue
			}
			params, err := json.Marshal(t.InputSchema)
			if err != nil || string(params) == "null" {
				params = json.RawMessage(`{"type":"object"}`)
			}
			out.Tools = append(out.Tools, OpenAITool{Type: "function",
				Function: OpenAIFunction{Name: ProxiedName(r.Name, t.Name), Description: t.Description, Parameters: params}})
		}
	})
	return out, err
}

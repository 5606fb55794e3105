package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Measurement is what --measure writes and scripts/cost reads: each
// family's representative call and what the stack's services billed for it,
// per call.
type Measurement struct {
	// Taken says when, on what, and how many calls each figure averages.
	Taken   string `json:"taken"`
	Machine string `json:"machine"`
	Calls   int    `json:"calls"`
	// Families are the calls measured, one or more per family.
	Families []FamilyCall `json:"families"`
}

// FamilyCall is one representative call of a family and its usage per call.
type FamilyCall struct {
	Family string `json:"family"`
	Tool   string `json:"tool"`
	Usage  Usage  `json:"usage_per_call"`
}

// callGap spaces the measured calls: a principal may make 10 calls a second.
const callGap = 150 * time.Millisecond

// scenario is a representative call: setup calls first (not counted), then
// the call made n times.
type scenario struct {
	family, tool string
	setup        [][2]any // {tool, arguments}
	args         func(run string, i int) map[string]any
}

func scenarios() []scenario {
	doc := "# API keys\n\n" + strings.Repeat("Rotate the API keys of a service every 90 days, and at once when a key may have leaked. ", 10)
	return []scenario{
		{family: "memory", tool: "memory_add_message",
			setup: [][2]any{{"memory_get_or_create", map[string]any{"conversation_id": "measure"}}},
			args: func(run string, i int) map[string]any {
				return map[string]any{"conversation_id": "measure", "role": "user", "content": fmt.Sprintf("message %d: how often should I rotate API keys?", i)}
			}},
		{family: "memory", tool: "memory_get_context",
			args: func(string, int) map[string]any { return map[string]any{"conversation_id": "measure"} }},
		{family: "vector", tool: "vector_document_ingest",
			setup: [][2]any{{"vector_store_create", map[string]any{"alias": "measure", "description": "API key practice"}}},
			args: func(run string, i int) map[string]any {
				return map[string]any{"store": "measure", "doc_id": fmt.Sprintf("doc-%d", i), "file_name": "keys.md", "content": doc}
			}},
		{family: "vector", tool: "optimizer_vs-retriever",
			args: func(string, int) map[string]any {
				return map[string]any{"question": "How often should API keys be rotated?", "stores": []string{"measure"}}
			}},
		{family: "rag", tool: "rag_basic",
			args: func(string, int) map[string]any {
				return map[string]any{"query": "How often should API keys be rotated?", "stores": []string{"measure"}}
			}},
		{family: "career", tool: "atom_list",
			args: func(string, int) map[string]any { return map[string]any{} }},
		{family: "connectors", tool: "connector_list",
			args: func(string, int) map[string]any { return map[string]any{} }},
		{family: "operations", tool: "get_audit_trace",
			args: func(string, int) map[string]any {
				return map[string]any{"trace_id": "4bf92f3577b34da6a3ce929d0e0e4736"}
			}},
	}
}

// measure makes each scenario's call n times through the front door, warm
// (one call first, not counted), and writes the usage per call to file.
func (s *stack) measure(ctx context.Context, n int, file string) error {
	cs, err := connect(ctx, s.frontURL+"/mcp", s.key)
	if err != nil {
		return err
	}
	defer cs.Close()
	call := func(tool string, args map[string]any) error {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			return fmt.Errorf("measure: %s: %w", tool, err)
		}
		if res.IsError {
			b, _ := json.Marshal(res.Content)
			return fmt.Errorf("measure: %s answered an error: %s", tool, b)
		}
		return nil
	}
	host, _ := os.Hostname()
	m := Measurement{Taken: time.Now().UTC().Format(time.DateOnly), Machine: host + ", " + machine(), Calls: n}
	run := fmt.Sprintf("%x", time.Now().UnixNano())
	for _, sc := range scenarios() {
		for _, st := range sc.setup {
			if err := call(st[0].(string), st[1].(map[string]any)); err != nil {
				return err
			}
		}
		if err := call(sc.tool, sc.args(run, -1)); err != nil { // warm
			return err
		}
		time.Sleep(500 * time.Millisecond) // S3 notifications of the setup settle
		s.meter.take()
		for i := range n {
			time.Sleep(callGap) // within the gateway's default rate limits, which stay on: their writes are a call's cost
			if err := call(sc.tool, sc.args(run, i)); err != nil {
				return err
			}
		}
		time.Sleep(500 * time.Millisecond)
		u := s.meter.take().per(n)
		m.Families = append(m.Families, FamilyCall{Family: sc.family, Tool: sc.tool, Usage: u})
		fmt.Printf("  %-12s %-24s %s\n", sc.family, sc.tool, summary(u))
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(file, append(b, '\n'), 0o644)
}

func summary(u Usage) string {
	var fns []string
	for _, k := range slices.Sorted(maps.Keys(u.Invocations)) {
		fns = append(fns, fmt.Sprintf("%s x%.2g %.0fms", k, u.Invocations[k], u.BilledMS[k]))
	}
	return fmt.Sprintf("%s; DynamoDB %.1f RRU %.1f WRU; S3 %.1f+%.1f; SFN %.1f; KMS %.1f", strings.Join(fns, ", "), u.ReadUnits, u.WriteUnits, u.S3Tier1, u.S3Tier2, u.Executions, u.KMSRequests)
}

// machine describes this machine and how busy it was.
func machine() string {
	load, _ := os.ReadFile("/proc/loadavg")
	return fmt.Sprintf("%s/%s, %d CPUs, load average %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), strings.Join(strings.Fields(string(load))[:min(3, len(strings.Fields(string(load))))], " "))
}

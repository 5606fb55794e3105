package handlers_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// careerCall invokes the career tool's function handler, built from d, with
// a tools/call envelope, through the JSON path Lambda takes.
func careerCall(t *testing.T, d lambdafn.Deps, c tenant.Caller, tool, args string) invoke.Response {
	t.Helper()
	ct, ok := catalog.Default().Tool(tool)
	if !ok {
		t.Fatalf("no tool %s", tool)
	}
	payload, _ := json.Marshal(invoke.Request{Method: invoke.MethodCallTool, Tool: tool, Arguments: json.RawMessage(args),
		Caller: c, RequestID: "req-1", TraceID: "trace-" + strings.ReplaceAll(tool, "_", "-")})
	out, err := function(t, ct.Function).Build(d).Invoke(context.Background(), payload)
	if err != nil {
		t.Fatalf("%s: function error %v", tool, err)
	}
	var resp invoke.Response
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return resp
}

// structured returns a successful call's structured content.
func structured(t *testing.T, resp invoke.Response) map[string]any {
	t.Helper()
	if resp.Error != nil {
		t.Fatalf("tool error %+v", resp.Error)
	}
	var res struct {
		StructuredContent map[string]any `json:"structuredContent"`
	}
	json.Unmarshal(resp.Result, &res)
	return res.StructuredContent
}

func newTenant(t *testing.T, tbl store.Table, principal string) tenant.Caller {
	p := storetest.NewPrefix(t, tbl)
	return tenant.Caller{Tenant: strings.ReplaceAll(strings.TrimPrefix(p, "test#"), "#", ""), Principal: principal}
}

func TestEveryCareerToolNamesTheFieldOfMalformedInput(t *testing.T) {
	tbl := storetest.OpenEmbedded(t)
	d := lambdafn.Deps{Table: tbl, Blobs: storetest.OpenLocalFS(t)}
	c := tenant.Caller{Tenant: "acme", Principal: "alice"}
	cases := []struct{ tool, args, field string }{
		{"ingest_resume", `{"file_name":"cv.exe","content_base64":"eA=="}`, "file_name"},
		{"ingest_resume", `{"s3_key":"tenants/other/cv.md"}`, "s3_key"},
		{"ingest_resume", `{"s3_key":"tenants/acme/../other/cv.md"}`, "s3_key"},
		{"ingest_resume", `{"file_name":"cv.md","content_base64":"@@"}`, "content_base64"},
		{"atom_create", `{"text":""}`, "text"},
		{"atom_create", `{}`, "text"},
		{"atom_update", `{"atom_id":"a#b","expected_version":1,"text":"x"}`, "atom_id"},
		{"atom_get", `{"atom_ids":[]}`, "atom_ids"},
		{"atom_list", `{"limit":0}`, "limit"},
		{"opportunity_create", `{"title":"x","requirements":[]}`, "requirements"},
		{"opportunity_update", `{"opportunity_id":"o","expected_version":-1,"title":"x","requirements":["y"]}`, "expected_version"},
		{"opportunity_get", `{"opportunity_ids":["../x"]}`, "opportunity_ids[]"},
		{"opportunity_list", `{"cursor":5}`, "cursor"},
		{"match_opportunity", `{"opportunity_id":"o","strategy":"magic"}`, "strategy"},
		{"match_opportunity", `{}`, "opportunity_id"},
		{"match_opportunity", `{"opportunity":{"title":"x","requirements":[""]}}`, "opportunity.requirements[]"},
		{"validate_match_report", `{"report_id":"a b"}`, "report_id"},
		{"validate_match_report", `{}`, "report_id"},
		{"index_build", `{"scope":"everything"}`, "scope"},
		{"index_run_list", `{"limit":5000}`, "limit"},
		{"interaction_create", `{"interaction_id":"a/b"}`, "interaction_id"},
		{"interaction_get", `{}`, "interaction_ids"},
		{"interaction_apply_event", `{"interaction_id":"i","event":"Jump","idempotency_key":"k"}`, "event"},
		{"interaction_apply_event", `{"interaction_id":"i","event":"Send"}`, "idempotency_key"},
		{"interaction_apply_event", `{"interaction_id":"i","event":"Send","idempotency_key":"k","expected_state":9}`, "expected_state"},
	}
	covered := map[string]bool{}
	for _, tc := range cases {
		covered[tc.tool] = true
		t.Run(tc.tool+tc.args, func(t *testing.T) {
			resp := careerCall(t, d, c, tc.tool, tc.args)
			if resp.Error == nil || resp.Error.Kind != "invalid_argument" || resp.Error.Field != tc.field {
				t.Errorf("%s(%s) answered %+v (%s), want invalid_argument on %s", tc.tool, tc.args, resp.Error, resp.Result, tc.field)
			}
		})
	}
	for _, tool := range catalog.Default().Tools() {
		if tool.Family == catalog.CareerFamily && !covered[tool.Name] {
			t.Errorf("no malformed-input case for %s", tool.Name)
		}
	}
}

// TestCareerTenantsNeverReachEachOther has tenant A build opportunities,
// atoms, a match report and an interaction, then lets tenant B try every
// career tool on A's ids. B must learn nothing and change nothing.
func TestCareerTenantsNeverReachEachOther(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		d := lambdafn.Deps{Table: tbl, Blobs: storetest.OpenLocalFS(t)}
		a, b := newTenant(t, tbl, "alice"), newTenant(t, tbl, "bob")
		must := func(c tenant.Caller, tool, args string) map[string]any {
			t.Helper()
			return structured(t, careerCall(t, d, c, tool, args))
		}
		must(a, "opportunity_update", `{"opportunity_id":"opp-a","expected_version":0,"title":"Secret role","requirements":["Go on AWS Lambda"]}`)
		must(a, "atom_update", `{"atom_id":"atom-a","expected_version":0,"text":"Secret: built Go services on AWS Lambda"}`)
		must(a, "interaction_create", `{"interaction_id":"int-a","opportunity_id":"opp-a"}`)
		report := must(a, "match_opportunity", `{"opportunity_id":"opp-a"}`)["match_report"].(map[string]any)
		reportID := report["report_id"].(string)
		if report["matched_atoms"].([]any)[0] != "atom-a" {
			t.Fatalf("A's match = %v", report)
		}
		before := must(a, "interaction_get", `{"interaction_ids":["int-a"]}`)
		aKey := "tenants/" + a.Tenant + "/resumes/cv.md"
		d.Blobs.Put(context.Background(), aKey, []byte("## Skills\n- Secret skill\n"), nil)

		for _, tc := range []struct {
			tool, args string
			check      func(resp invoke.Response) bool
		}{
			{"atom_get", `{"atom_ids":["atom-a"]}`, missing("atom-a")},
			{"atom_list", `{}`, empty("atoms")},
			{"atom_update", `{"atom_id":"atom-a","expected_version":1,"text":"B was here"}`, errKind("not_found")},
			{"opportunity_get", `{"opportunity_ids":["opp-a"]}`, missing("opp-a")},
			{"opportunity_list", `{}`, empty("opportunities")},
			{"opportunity_update", `{"opportunity_id":"opp-a","expected_version":1,"title":"B","requirements":["B"]}`, errKind("not_found")},
			{"match_opportunity", `{"opportunity_id":"opp-a"}`, errKind("not_found")},
			{"validate_match_report", `{"report_id":"` + reportID + `"}`, errKind("not_found")},
			{"interaction_get", `{"interaction_ids":["int-a"]}`, missing("int-a")},
			{"interaction_apply_event", `{"interaction_id":"int-a","event":"Prepare","idempotency_key":"b-1"}`, outcome("not_found")},
			{"ingest_resume", `{"s3_key":"` + aKey + `"}`, errKind("invalid_argument")},
			{"index_run_list", `{}`, empty("runs")},
		} {
			t.Run(tc.tool, func(t *testing.T) {
				resp := careerCall(t, d, b, tc.tool, tc.args)
				if !tc.check(resp) || strings.Contains(string(resp.Result), "Secret") {
					t.Errorf("tenant B's %s answered %+v %s", tc.tool, resp.Error, resp.Result)
				}
			})
		}
		// B's own match sees none of A's atoms.
		bm := must(b, "match_opportunity", `{"opportunity":{"title":"Secret role","requirements":["Go on AWS Lambda"]}}`)["match_report"].(map[string]any)
		if bm["atoms_considered"].(float64) != 0 {
			t.Errorf("tenant B's match considered A's atoms: %v", bm)
		}
		after := must(a, "interaction_get", `{"interaction_ids":["int-a"]}`)
		if diff := cmp.Diff(before, after); diff != "" {
			t.Errorf("A's interaction changed while B tried (-before +after):\n%s", diff)
		}
		if got := must(a, "atom_get", `{"atom_ids":["atom-a"]}`)["atoms"].([]any)[0].(map[string]any); got["text"] != "Secret: built Go services on AWS Lambda" {
			t.Errorf("A's atom is now %v", got)
		}
	})
}

func missing(id string) func(invoke.Response) bool {
	return func(resp invoke.Response) bool {
		var res struct {
			StructuredContent map[string]any `json:"structuredContent"`
		}
		json.Unmarshal(resp.Result, &res)
		m, _ := res.StructuredContent["missing"].([]any)
		return resp.Error == nil && len(m) == 1 && m[0] == id
	}
}

func empty(field string) func(invoke.Response) bool {
	return func(resp invoke.Response) bool {
		var res struct {
			StructuredContent map[string]any `json:"structuredContent"`
		}
		json.Unmarshal(resp.Result, &res)
		l, ok := res.StructuredContent[field].([]any)
		return resp.Error == nil && ok && len(l) == 0
	}
}

func errKind(kind string) func(invoke.Response) bool {
	return func(resp invoke.Response) bool { return resp.Error != nil && resp.Error.Kind == kind }
}

func outcome(want string) func(invoke.Response) bool {
	return func(resp invoke.Response) bool {
		var res struct {
			StructuredContent struct {
				Result struct{ Outcome string }
			} `json:"structuredContent"`
		}
		json.Unmarshal(resp.Result, &res)
		return resp.Error == nil && res.StructuredContent.Result.Outcome == want
	}
}

// TestCareerEventsShareTheCallsTrace applies an interaction event through its
// Lambda handler and reads the call's trace back with get_audit_trace: the
// family's own events and lambdafn's ToolCalled, in order.
func TestCareerEventsShareTheCallsTrace(t *testing.T) {
	tbl := storetest.OpenEmbedded(t)
	d := lambdafn.Deps{Table: tbl}
	c := tenant.Caller{Tenant: "acme", Principal: "alice"}
	structured(t, careerCall(t, d, c, "interaction_create", `{"interaction_id":"int-1"}`))
	out := structured(t, careerCall(t, d, c, "interaction_apply_event", `{"interaction_id":"int-1","event":"Prepare","idempotency_key":"k1"}`))
	trace := "trace-interaction-apply-event"
	if out["trace_id"] != trace {
		t.Fatalf("the result names trace %v, want the call's %s", out["trace_id"], trace)
	}
	structured(t, careerCall(t, d, c, "interaction_apply_event", `{"interaction_id":"int-1","event":"Prepare","idempotency_key":"k1"}`))
	structured(t, careerCall(t, d, c, "interaction_apply_event", `{"interaction_id":"int-1","event":"ReceiveReply","idempotency_key":"k2"}`))
	read := structured(t, careerCall(t, d, c, "get_audit_trace", `{"trace_id":"`+trace+`"}`))
	var got []string
	for _, e := range read["events"].([]any) {
		ev := e.(map[string]any)
		got = append(got, ev["type"].(string)+" "+ev["outcome"].(string))
	}
	want := []string{
		"InteractionTransitionAttempted ok", "InteractionTransitionCompleted ok", "ToolCalled ok",
		"InteractionTransitionAttempted ok", "ToolCalled ok", // the retry: already applied, no second Completed
		"InteractionTransitionAttempted ok", "InteractionTransitionRejected invalid_transition", "ToolCalled ok",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("audit trail mismatch (-want +got):\n%s", diff)
	}
}

// TestATraceIDArgumentIsTheCallsTraceEverywhere passes trace_id as an
// argument: the call's audit events, lambdafn's ToolCalled among them, and
// the result's _meta all use it, and nothing lands under the envelope's trace.
func TestATraceIDArgumentIsTheCallsTraceEverywhere(t *testing.T) {
	tbl := storetest.OpenEmbedded(t)
	d := lambdafn.Deps{Table: tbl}
	c := tenant.Caller{Tenant: "acme", Principal: "alice"}
	trail := func(trace string) []string {
		t.Helper()
		var got []string
		for _, e := range structured(t, careerCall(t, d, c, "get_audit_trace", `{"trace_id":"`+trace+`"}`))["events"].([]any) {
			got = append(got, e.(map[string]any)["type"].(string))
		}
		return got
	}
	metaTrace := func(resp invoke.Response) any {
		var res struct {
			Meta map[string]any `json:"_meta"`
		}
		json.Unmarshal(resp.Result, &res)
		return res.Meta[invoke.TraceMetaKey]
	}
	structured(t, careerCall(t, d, c, "interaction_create", `{"interaction_id":"int-1","trace_id":"host-trace-1"}`))
	resp := careerCall(t, d, c, "interaction_apply_event", `{"interaction_id":"int-1","event":"Prepare","idempotency_key":"k1","trace_id":"host-trace-1"}`)
	if out := structured(t, resp); out["trace_id"] != "host-trace-1" || metaTrace(resp) != "host-trace-1" {
		t.Errorf("result names trace %v, _meta %v; want host-trace-1 in both", out["trace_id"], metaTrace(resp))
	}
	resp = careerCall(t, d, c, "match_opportunity", `{"opportunity":{"title":"Go","requirements":["Go"]},"trace_id":"host-trace-1"}`)
	if metaTrace(resp) != "host-trace-1" {
		t.Errorf("match_opportunity _meta names trace %v, want host-trace-1", metaTrace(resp))
	}
	want := []string{
		"InteractionCreated", "ToolCalled",
		"InteractionTransitionAttempted", "InteractionTransitionCompleted", "ToolCalled",
		"RunStarted", "MatchCompleted", "ValidationCompleted", "RunCompleted", "ToolCalled",
	}
	if diff := cmp.Diff(want, trail("host-trace-1")); diff != "" {
		t.Errorf("the argument's trace mismatch (-want +got):\n%s", diff)
	}
	for _, tool := range []string{"interaction_create", "interaction_apply_event", "match_opportunity"} {
		if got := trail("trace-" + strings.ReplaceAll(tool, "_", "-")); len(got) != 0 {
			t.Errorf("the envelope's trace of %s holds %v, want nothing", tool, got)
		}
	}
	// An invalid trace_id is refused by name, under the envelope's trace.
	resp = careerCall(t, d, c, "interaction_apply_event", `{"interaction_id":"int-1","event":"Send","idempotency_key":"k2","trace_id":"no spaces"}`)
	if resp.Error == nil || resp.Error.Field != "trace_id" || metaTrace(resp) != "trace-interaction-apply-event" {
		t.Errorf("a bad trace_id answered %+v, _meta %v", resp.Error, metaTrace(resp))
	}
}

func TestInteractionCreateNamesAnUnknownOpportunity(t *testing.T) {
	d := lambdafn.Deps{Table: storetest.OpenEmbedded(t)}
	resp := careerCall(t, d, tenant.Caller{Tenant: "acme", Principal: "alice"}, "interaction_create", `{"opportunity_id":"opp-nowhere"}`)
	if resp.Error == nil || resp.Error.Kind != "not_found" || resp.Error.Field != "opportunity_id" || !strings.Contains(resp.Error.Message, "opp-nowhere") {
		t.Errorf("interaction_create(unknown opportunity) answered %+v", resp.Error)
	}
}

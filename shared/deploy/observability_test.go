package deploy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/metrics"
)

// emitted returns every metric the functions write (package metrics), as
// "Namespace/Name" -> the dimension sets it is published under ("Family",
// "Family,Function", ...), read from records the package writes for every
// kind of call and connector event.
func emitted(t *testing.T) map[string][]string {
	t.Helper()
	var out bytes.Buffer
	m := metrics.New(&out)
	for _, k := range []fault.Kind{"", fault.KindInvalid, fault.KindInternal, fault.KindRateLimited} {
		m.Call(metrics.Call{Family: "f", Function: "x", Kind: k})
	}
	m.Throttled(metrics.Call{Family: "f", Function: "x"})
	m.ConnectorCall("t", "c", 0, true)
	for _, n := range []string{metrics.CacheHits, metrics.CacheMisses, metrics.ApprovalsRequested, metrics.ApprovalsGranted, metrics.ApprovalsDenied, metrics.ApprovalsExpired} {
		m.ConnectorCount("t", "c", n)
	}
	got := map[string][]string{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var r struct {
			AWS struct {
				CloudWatchMetrics []struct {
					Namespace  string
					Dimensions [][]string
					Metrics    []struct{ Name string }
				}
			} `json:"_aws"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		for _, d := range r.AWS.CloudWatchMetrics {
			for _, mt := range d.Metrics {
				for _, set := range d.Dimensions {
					key, dims := d.Namespace+"/"+mt.Name, strings.Join(set, ",")
					if !slices.Contains(got[key], dims) {
						got[key] = append(got[key], dims)
					}
				}
			}
		}
	}
	return got
}

// resourcesOfType returns the raw resources of a type, by logical ID.
func (p parsed) resourcesOfType(typ string) map[string]map[string]any {
	out := map[string]map[string]any{}
	for id, r := range p.raw["Resources"].(map[string]any) {
		if r := r.(map[string]any); r["Type"] == typ {
			out[id] = r
		}
	}
	return out
}

// metricLine is a metric a dashboard widget or an alarm names.
type metricLine struct {
	namespace, name string
	dims            map[string]string // name -> value
}

func (l metricLine) dimNames() string {
	var names []string
	for n := range l.dims {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

// Every function is traced with X-Ray, and the state machine too, which may
// write its traces: one trace follows a call from the gateway to a function
// to the state machine and its steps.
func TestEveryFunctionAndTheStateMachineAreTraced(t *testing.T) {
	p := readTemplate(t)
	if got := p.raw["Globals"].(map[string]any)["Function"].(map[string]any)["Tracing"]; got != "Active" {
		t.Errorf("Globals.Function.Tracing = %v, want Active", got)
	}
	for id := range p.typed.GetAllServerlessFunctionResources() {
		if _, ok := props(p.resource(t, id))["Tracing"]; ok {
			t.Errorf("%s overrides the tracing of Globals", id)
		}
	}
	sm := props(p.resource(t, PipelineLogicalID))
	if diff := cmp.Diff(map[string]any{"Enabled": true}, sm["Tracing"]); diff != "" {
		t.Errorf("state machine Tracing mismatch (-want +got):\n%s", diff)
	}
	var writes []any
	for _, st := range sm["Policies"].([]any)[0].(map[string]any)["Statement"].([]any) {
		if st := st.(map[string]any); st["Sid"] == "WriteTraces" {
			writes = st["Action"].([]any)
		}
	}
	if diff := cmp.Diff(strs("xray:PutTraceSegments", "xray:PutTelemetryRecords", "xray:GetSamplingRules", "xray:GetSamplingTargets"), writes); diff != "" {
		t.Errorf("the state machine's X-Ray statement mismatch (-want +got):\n%s", diff)
	}
}

// Either front door writes one JSON line per request to a log group of its
// own, kept as long as the functions' logs; the REST API through the
// account's API Gateway logging role, which the stack creates and sets
// unless told the account has one (or no log is wanted), and it is traced.
func TestTheFrontDoorWritesAJSONAccessLog(t *testing.T) {
	p := readTemplate(t)
	httpSettings, _ := props(p.resource(t, "HttpApiStage"))["AccessLogSettings"].(map[string]any)
	rest := props(p.resource(t, "RestApiStage"))
	restSettings := ifv("RestApiAccessLogs", map[string]any{"DestinationArn": getAtt(AccessLogGroupID + ".Arn"), "Format": httpSettings["Format"]}, noValue)
	if diff := cmp.Diff(restSettings, rest["AccessLogSetting"]); diff != "" {
		t.Errorf("the REST API stage's AccessLogSetting mismatch (-want +got):\n%s", diff)
	}
	if rest["TracingEnabled"] != true {
		t.Errorf("the REST API stage is not traced")
	}
	if diff := cmp.Diff(getAtt(AccessLogGroupID+".Arn"), httpSettings["DestinationArn"]); diff != "" {
		t.Errorf("the HTTP API's DestinationArn mismatch (-want +got):\n%s", diff)
	}
	if got := props(p.resource(t, AccessLogGroupID))["RetentionInDays"]; !cmp.Equal(got, ref("LogRetentionDays")) {
		t.Errorf("access log retention %v, want the LogRetentionDays parameter", got)
	}
	// The REST API logs through the account's role: the stack's when it sets
	// it, and the stage waits for that setting (its Description names it).
	conds := p.raw["Conditions"].(map[string]any)
	// goformation's reader writes !Condition X as X.
	wantConds := map[string]any{
		"ApiGatewayLoggingCreate": map[string]any{"Fn::And": []any{"FrontDoorIsRest", map[string]any{"Fn::Equals": []any{ref("ApiGatewayLogging"), "create"}}}},
		"RestApiAccessLogs":       map[string]any{"Fn::And": []any{"FrontDoorIsRest", map[string]any{"Fn::Not": []any{map[string]any{"Fn::Equals": []any{ref("ApiGatewayLogging"), "none"}}}}}},
	}
	if diff := cmp.Diff(wantConds, only(conds, wantConds)); diff != "" {
		t.Errorf("logging conditions mismatch (-want +got):\n%s", diff)
	}
	account := p.resource(t, "ApiGatewayAccount")
	role := p.resource(t, "ApiGatewayCloudWatchRole")
	if account["Condition"] != "ApiGatewayLoggingCreate" || role["Condition"] != "ApiGatewayLoggingCreate" || account["DeletionPolicy"] != "Retain" || role["DeletionPolicy"] != "Retain" ||
		!cmp.Equal(props(account)["CloudWatchRoleArn"], getAtt("ApiGatewayCloudWatchRole.Arn")) ||
		!strings.Contains(jsonText(t, props(role)), "AmazonAPIGatewayPushToCloudWatchLogs") {
		t.Errorf("the account's logging role: %v %v", account, role)
	}
	if !strings.Contains(jsonText(t, rest["Description"]), "${ApiGatewayAccount}") {
		t.Errorf("the REST API stage does not wait for the account's logging role: %v", rest["Description"])
	}
	// Filled in, every $context variable is a string: the line is JSON.
	format, _ := httpSettings["Format"].(string)
	filled := regexp.MustCompile(`\$context\.[A-Za-z.]+`).ReplaceAllString(format, "v")
	var line map[string]string
	if err := json.Unmarshal([]byte(filled), &line); err != nil {
		t.Fatalf("the access log format %s is not a JSON object of strings: %v", format, err)
	}
	for _, want := range []string{"requestId", "status", "responseLatency", "integrationLatency", "integrationError"} {
		if _, ok := line[want]; !ok {
			t.Errorf("the access log does not record %s", want)
		}
	}
	if strings.Contains(strings.ToLower(format), "header") || strings.Contains(format, "authorizer") {
		t.Errorf("the access log records headers or credentials: %s", format)
	}
}

// The dashboard shows, for every family, the metrics the functions emit,
// and nothing they do not: each line names an emitted metric under a
// dimension set it is published with.
func TestTheDashboardNamesOnlyEmittedMetricsAndEveryFamily(t *testing.T) {
	p := readTemplate(t)
	body, _ := props(p.resource(t, DashboardLogicalID))["DashboardBody"].(map[string]any)["Fn::Sub"].(string)
	var dash struct {
		Widgets []struct {
			Properties struct {
				Metrics [][]string
				Region  string
				Stat    string
			}
		}
	}
	if err := json.Unmarshal([]byte(body), &dash); err != nil {
		t.Fatalf("DashboardBody is not JSON: %v", err)
	}
	emits := emitted(t)
	queues := p.resourcesOfType("AWS::SQS::Queue")
	shown := map[string][]string{} // metric -> families
	for _, w := range dash.Widgets {
		if w.Properties.Region != "${AWS::Region}" {
			t.Errorf("widget region %q", w.Properties.Region)
		}
		for _, m := range w.Properties.Metrics {
			l := metricLine{namespace: m[0], name: m[1], dims: map[string]string{}}
			for i := 2; i+1 < len(m); i += 2 {
				l.dims[m[i]] = m[i+1]
			}
			if l.namespace == "AWS/SQS" {
				q := strings.TrimSuffix(strings.TrimPrefix(l.dims["QueueName"], "${"), ".QueueName}")
				if _, ok := queues[q]; !ok || l.name != "ApproximateNumberOfMessagesVisible" {
					t.Errorf("the dashboard shows %v of %s, not a failure queue's depth", l.name, l.dims["QueueName"])
				}
				continue
			}
			if !slices.Contains(emits[l.namespace+"/"+l.name], l.dimNames()) {
				t.Errorf("the dashboard shows %s/%s by %s, which no function emits (emitted: %v)", l.namespace, l.name, l.dimNames(), emits[l.namespace+"/"+l.name])
			}
			shown[l.name] = append(shown[l.name], l.dims[metrics.DimFamily])
		}
	}
	want := append(families(catalog.Default()), []string{}...)
	for _, m := range []string{metrics.Calls, metrics.Errors, metrics.Faults, metrics.Throttles, metrics.ColdStarts, metrics.Latency} {
		if diff := cmp.Diff(want, shown[m]); diff != "" {
			t.Errorf("the dashboard's %s by family mismatch (-want +got):\n%s", m, diff)
		}
	}
	for _, m := range []string{metrics.ConnectorCalls, metrics.CacheHits, metrics.ApprovalsExpired, metrics.ConnectorLatency} {
		if !slices.Equal(shown[m], []string{catalog.ConnectorFamily}) {
			t.Errorf("the dashboard shows %s for %v, want the connectors family", m, shown[m])
		}
	}
}

// alarmMetrics returns the metrics an alarm watches.
func alarmMetrics(a map[string]any) []metricLine {
	dims := func(list any) map[string]string {
		out := map[string]string{}
		for _, d := range list.([]any) {
			d := d.(map[string]any)
			v, ok := d["Value"].(string)
			if !ok {
				v = jsonValue(d["Value"])
			}
			out[d["Name"].(string)] = v
		}
		return out
	}
	if ms, ok := a["Metrics"].([]any); ok {
		var out []metricLine
		for _, m := range ms {
			if stat, ok := m.(map[string]any)["MetricStat"].(map[string]any); ok {
				mt := stat["Metric"].(map[string]any)
				out = append(out, metricLine{namespace: mt["Namespace"].(string), name: mt["MetricName"].(string), dims: dims(mt["Dimensions"])})
			}
		}
		return out
	}
	return []metricLine{{namespace: a["Namespace"].(string), name: a["MetricName"].(string), dims: dims(a["Dimensions"])}}
}

func jsonValue(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// Parameter Monitoring=none removes every fixed monthly cost of watching:
// the dashboard, each alarm, and the output naming the dashboard.
func TestMonitoringNoneRemovesTheDashboardAndEveryAlarm(t *testing.T) {
	p := readTemplate(t)
	watched := p.resourcesOfType("AWS::CloudWatch::Alarm")
	watched[DashboardLogicalID] = p.resource(t, DashboardLogicalID)
	watched["Outputs.Dashboard"] = p.raw["Outputs"].(map[string]any)["Dashboard"].(map[string]any)
	for id, r := range watched {
		if r["Condition"] != MonitoringOn {
			t.Errorf("%s has condition %v, want %s", id, r["Condition"], MonitoringOn)
		}
	}
	cond := p.raw["Conditions"].(map[string]any)[MonitoringOn]
	if want := map[string]any{"Fn::Equals": []any{ref("Monitoring"), "full"}}; !cmp.Equal(cond, want) {
		t.Errorf("condition %s = %v, want %v", MonitoringOn, cond, want)
	}
}

// Every family, and the gateway, has an alarm on its error rate, its
// throttles and its p99 latency, each on metrics its functions emit; every
// alarm notifies the optional topic.
func TestEveryFamilyHasItsAlarms(t *testing.T) {
	p := readTemplate(t)
	emits := emitted(t)
	alarms := p.resourcesOfType("AWS::CloudWatch::Alarm")
	got := map[string][]string{} // family -> the metrics alarmed
	topic := ifv("HasAlarmTopic", []any{ref(AlarmTopicParameter)}, noValue)
	for id, r := range alarms {
		a := props(r)
		for _, action := range []string{"AlarmActions", "OKActions"} {
			if !cmp.Equal(a[action], topic) {
				t.Errorf("%s %s = %v, want the AlarmTopicArn parameter's topic if set", id, action, a[action])
			}
		}
		for _, l := range alarmMetrics(a) {
			if l.namespace == "AWS/SQS" {
				continue
			}
			if !slices.Contains(emits[l.namespace+"/"+l.name], l.dimNames()) {
				t.Errorf("%s watches %s/%s by %s, which no function emits", id, l.namespace, l.name, l.dimNames())
			}
			fam := l.dims[metrics.DimFamily]
			if !slices.Contains(got[fam], l.name) {
				got[fam] = append(got[fam], l.name)
			}
		}
	}
	for _, fam := range families(catalog.Default()) {
		list := got[fam]
		slices.Sort(list)
		if diff := cmp.Diff([]string{metrics.Calls, metrics.Faults, metrics.Latency, metrics.Throttles}, list); diff != "" {
			t.Errorf("the %s family's alarms watch mismatch (-want +got):\n%s", fam, diff)
		}
		rate := props(alarms[familyID(fam)+"ErrorRateAlarm"])
		if rate == nil || rate["Threshold"] != float64(ErrorRateThreshold) || !strings.Contains(rate["Metrics"].([]any)[0].(map[string]any)["Expression"].(string), "100 * FILL(faults, 0) / calls") {
			t.Errorf("the %s family's error rate alarm %v", fam, rate)
		}
		latency := props(alarms[familyID(fam)+"LatencyAlarm"])
		if latency == nil || latency["ExtendedStatistic"] != "p99" || latency["Threshold"].(float64) <= 0 {
			t.Errorf("the %s family's latency alarm %v", fam, latency)
		}
	}
	if topic := p.raw["Parameters"].(map[string]any)[AlarmTopicParameter].(map[string]any); topic["Default"] != "" {
		t.Errorf("AlarmTopicArn defaults to %v, want none", topic["Default"])
	}
}

// A function S3 invokes sends what it fails to handle, after Lambda's
// retries, to a queue of its own that it may send to and whose depth is
// alarmed.
func TestTheIndexerHasAnAlarmedFailureQueue(t *testing.T) {
	p := readTemplate(t)
	queues := p.resourcesOfType("AWS::SQS::Queue")
	alarms := p.resourcesOfType("AWS::CloudWatch::Alarm")
	triggers := 0
	for _, f := range catalog.Default().Functions() {
		if f.Trigger == nil || f.Trigger.S3 == nil {
			continue
		}
		triggers++
		id := invoke.LogicalID(f.Path)
		q := failureQueueID(id)
		t.Run(f.Path, func(t *testing.T) {
			if _, ok := queues[q]; !ok {
				t.Fatalf("no queue %s", q)
			}
			fn := props(p.resource(t, id))
			want := map[string]any{"MaximumRetryAttempts": float64(2), "DestinationConfig": map[string]any{"OnFailure": map[string]any{"Type": "SQS", "Destination": getAtt(q + ".Arn")}}}
			if diff := cmp.Diff(want, fn["EventInvokeConfig"]); diff != "" {
				t.Errorf("EventInvokeConfig mismatch (-want +got):\n%s", diff)
			}
			if !strings.Contains(jsonText(t, fn["Policies"]), `{"Action":["sqs:SendMessage"],"Effect":"Allow","Resource":[{"Fn::GetAtt":"`+q+`.Arn"}],"Sid":"SendFailedEvents"}`) {
				t.Errorf("%s may not send to %s: %s", id, q, jsonText(t, fn["Policies"]))
			}
			alarmed := false
			for _, a := range alarms {
				for _, l := range alarmMetrics(props(a)) {
					alarmed = alarmed || l.namespace == "AWS/SQS" && l.name == "ApproximateNumberOfMessagesVisible" &&
						l.dims["QueueName"] == jsonValue(getAtt(q+".QueueName")) && props(a)["Threshold"] == float64(0)
				}
			}
			if !alarmed {
				t.Errorf("no alarm on the depth of %s", q)
			}
		})
	}
	if triggers == 0 {
		t.Fatal("the catalog has no function S3 invokes; this test checks nothing")
	}
}

// The dashboard shows connector_health's figures per tenant and connector,
// which are properties of the connector records rather than dimensions: a
// Logs Insights table over the log group of every function that reaches
// connectors, summing each connector metric, grouped by the properties the
// records carry.
func TestTheDashboardTablesConnectorFiguresByTenantAndConnector(t *testing.T) {
	p := readTemplate(t)
	body, _ := props(p.resource(t, DashboardLogicalID))["DashboardBody"].(map[string]any)["Fn::Sub"].(string)
	var dash struct {
		Widgets []struct {
			Type       string
			Properties struct{ Query string }
		}
	}
	if err := json.Unmarshal([]byte(body), &dash); err != nil {
		t.Fatalf("DashboardBody is not JSON: %v", err)
	}
	var query string
	for _, w := range dash.Widgets {
		if w.Type == "log" {
			query = w.Properties.Query
		}
	}
	var record bytes.Buffer
	metrics.New(&record).ConnectorCall("acme", "github", time.Millisecond, false)
	var rec map[string]any
	if err := json.Unmarshal(record.Bytes(), &rec); err != nil || rec["tenant"] != "acme" || rec["connector"] != "github" {
		t.Fatalf("a connector record %s lacks the tenant and connector the table groups by", record.String())
	}
	if !strings.Contains(query, "by tenant, connector") {
		t.Errorf("no dashboard table groups connector figures by tenant and connector: %q", query)
	}
	for _, f := range Functions(catalog.Default()) {
		if source := "SOURCE '/aws/lambda/${AWS::StackName}-" + f.Name + "'"; f.Connects != strings.Contains(query, source) {
			t.Errorf("the connectors table reads %s: %v; want it exactly when the function reaches connectors (%v)", f.Name, !f.Connects, f.Connects)
		}
	}
	for _, m := range []string{metrics.ConnectorCalls, metrics.ConnectorErrors, metrics.ConnectorLatency, metrics.CacheHits, metrics.CacheMisses,
		metrics.ApprovalsRequested, metrics.ApprovalsGranted, metrics.ApprovalsDenied, metrics.ApprovalsExpired} {
		if !strings.Contains(query, "("+m+",") && !strings.Contains(query, "("+m+")") {
			t.Errorf("the connectors table does not show %s", m)
		}
	}
}

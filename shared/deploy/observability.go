package deploy

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/metrics"
)

// What the template deploys to watch Switchboard: the HTTP API's access
// log, a dashboard and alarms over the functions' metric records (package
// metrics), and a failure destination for each function S3 invokes.
const (
	// AccessLogGroupID is the log group of the HTTP API's access log.
	AccessLogGroupID = "ApiAccessLogGroup"
	// DashboardLogicalID is the CloudWatch dashboard.
	DashboardLogicalID = "Dashboard"
	// MonitoringOn is the condition of the dashboard and the alarms:
	// parameter Monitoring is full (the default); none leaves them out,
	// with their fixed monthly prices.
	MonitoringOn = "MonitoringOn"
	// AlarmTopicParameter names the optional SNS topic the alarms notify.
	AlarmTopicParameter = "AlarmTopicArn"
	// alarmPeriod is the period, in seconds, every alarm evaluates.
	alarmPeriod = 300
	// ErrorRateThreshold is the percentage of a family's calls failing on
	// the server's side (metric Faults) over which its alarm fires.
	ErrorRateThreshold = 5
	// ThrottleThreshold is the number of a family's calls refused for a
	// limit within a period over which its alarm fires: a few refusals are
	// the limits at work; many are a flood, or limits set too low.
	ThrottleThreshold = 10
)

// accessLogFields are the HTTP API's access log line, a JSON object per
// request: who, what, the answer and its timings, and the gateway's errors.
// No header or query string: they may carry keys.
var accessLogFields = [][2]string{
	{"requestId", "$context.requestId"},
	{"time", "$context.requestTime"},
	{"ip", "$context.identity.sourceIp"},
	{"userAgent", "$context.identity.userAgent"},
	{"method", "$context.httpMethod"},
	{"route", "$context.routeKey"},
	{"path", "$context.path"},
	{"protocol", "$context.protocol"},
	{"status", "$context.status"},
	{"responseLength", "$context.responseLength"},
	{"responseLatency", "$context.responseLatency"},
	{"integrationLatency", "$context.integrationLatency"},
	{"integrationStatus", "$context.integrationStatus"},
	{"integrationError", "$context.integrationErrorMessage"},
	{"error", "$context.error.message"},
}

// accessLogFormat returns the access log's format: the fields as one JSON
// object, each value a string API Gateway fills in.
func accessLogFormat() string {
	parts := make([]string, len(accessLogFields))
	for i, f := range accessLogFields {
		parts[i] = fmt.Sprintf("%q:%q", f[0], f[1])
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// families returns the families whose calls have metrics: the catalog's,
// sorted, then the gateway's own.
func families(cat *catalog.Catalog) []string {
	var out []string
	for _, f := range cat.Functions() {
		if !slices.Contains(out, f.Family) {
			out = append(out, f.Family)
		}
	}
	slices.Sort(out)
	return append(out, metrics.GatewayFamily)
}

// latencyThreshold returns the p99 latency, in milliseconds, over which a
// family's alarm fires: half the shortest timeout of its functions, where a
// call is well on its way to being cut off.
func latencyThreshold(family string, cat *catalog.Catalog) int {
	shortest := GatewayLimits.Timeout
	if family != metrics.GatewayFamily {
		shortest = 0
		for _, f := range cat.Functions() {
			if f.Family == family && (shortest == 0 || f.Limits.Timeout < shortest) {
				shortest = f.Limits.Timeout
			}
		}
	}
	return int(shortest / 2 / time.Millisecond)
}

// templateAlarm is one CloudWatch alarm: on a metric (Namespace, Metric,
// the dimension Dim with the YAML value DimValue, a Statistic or an
// ExtendedStatistic), or on an expression of metrics (Expression, Inputs).
type templateAlarm struct {
	LogicalID, Name, Description         string
	Namespace, Metric, Dim, DimValue     string
	Statistic, ExtendedStatistic         string
	Expression                           string
	Inputs                               []alarmInput
	Threshold                            int
	EvaluationPeriods, DatapointsToAlarm int
	ComparisonOperator, TreatMissingData string
	Family                               string
}

// alarmInput is a metric of an alarm's expression: Name of the family's.
type alarmInput struct{ ID, Name, Family string }

// familyID returns the logical ID part of a family: memory -> Memory.
func familyID(family string) string { return strings.ToUpper(family[:1]) + family[1:] }

// familyAlarms returns the alarms of each family: its error rate (server
// faults per call), its throttles and its p99 latency.
func familyAlarms(fams []string, cat *catalog.Catalog) []templateAlarm {
	var out []templateAlarm
	for _, fam := range fams {
		id := familyID(fam)
		base := templateAlarm{Namespace: metrics.Namespace, Dim: metrics.DimFamily, DimValue: fam, Family: fam,
			EvaluationPeriods: 3, DatapointsToAlarm: 2, ComparisonOperator: "GreaterThanThreshold", TreatMissingData: "notBreaching"}
		rate := base
		rate.LogicalID, rate.Name = id+"ErrorRateAlarm", fam+"-error-rate"
		rate.Description = fmt.Sprintf("More than %d%% of the %s family's calls failed on the server's side (metric %s per %s)", ErrorRateThreshold, fam, metrics.Faults, metrics.Calls)
		rate.Expression = "IF(calls > 0, 100 * FILL(faults, 0) / calls, 0)"
		rate.Inputs = []alarmInput{{"calls", metrics.Calls, fam}, {"faults", metrics.Faults, fam}}
		rate.Threshold = ErrorRateThreshold
		throttles := base
		throttles.LogicalID, throttles.Name = id+"ThrottlesAlarm", fam+"-throttles"
		throttles.Description = fmt.Sprintf("More than %d of the %s family's calls in 5 minutes were refused for a rate or concurrency limit (metric %s)", ThrottleThreshold, fam, metrics.Throttles)
		throttles.Metric, throttles.Statistic, throttles.Threshold = metrics.Throttles, "Sum", ThrottleThreshold
		latency := base
		latency.LogicalID, latency.Name = id+"LatencyAlarm", fam+"-p99-latency"
		latency.Threshold = latencyThreshold(fam, cat)
		latency.Description = fmt.Sprintf("The %s family's p99 latency exceeded %d ms, half its shortest function timeout (metric %s)", fam, latency.Threshold, metrics.Latency)
		latency.Metric, latency.ExtendedStatistic = metrics.Latency, "p99"
		out = append(out, rate, throttles, latency)
	}
	return out
}

// templateFailureQueue is the failure destination of a function S3 invokes
// (asynchronously): the events it failed to handle after Lambda's retries
// land in the queue, whose depth is alarmed.
type templateFailureQueue struct {
	LogicalID, Function string
}

// failureQueueID returns the logical ID of the failure queue of the
// function whose logical ID is id.
func failureQueueID(id string) string { return strings.TrimSuffix(id, "Function") + "Failures" }

// failureAlarm returns the alarm on the depth of a failure queue.
func failureAlarm(q templateFailureQueue, function string) templateAlarm {
	return templateAlarm{
		LogicalID: q.LogicalID + "Alarm", Name: function + "-failures",
		Description: fmt.Sprintf("Events %s failed to handle after Lambda's retries wait in its failure queue", function),
		Namespace:   "AWS/SQS", Metric: "ApproximateNumberOfMessagesVisible", Dim: "QueueName", DimValue: "!GetAtt " + q.LogicalID + ".QueueName",
		Statistic: "Maximum", Threshold: 0, EvaluationPeriods: 1, DatapointsToAlarm: 1,
		ComparisonOperator: "GreaterThanThreshold", TreatMissingData: "notBreaching",
	}
}

// dashboard returns the dashboard's body, JSON for !Sub: per family, its
// calls, errors, faults, throttles, cold starts and p99 latency; the
// connectors' figures if the catalog has connectors (connectorFunctions,
// the names of the functions that reach them), as metrics for the family
// and per tenant and connector from their records (a Logs Insights table);
// the depth of each failure queue.
func dashboard(fams []string, queues []templateFailureQueue, connectorFunctions []string) string {
	type widget struct {
		Type       string         `json:"type"`
		X          int            `json:"x"`
		Y          int            `json:"y"`
		Width      int            `json:"width"`
		Height     int            `json:"height"`
		Properties map[string]any `json:"properties"`
	}
	var widgets []widget
	add := func(title, stat string, lines [][]any) {
		n := len(widgets)
		widgets = append(widgets, widget{Type: "metric", X: n % 2 * 12, Y: n / 2 * 6, Width: 12, Height: 6, Properties: map[string]any{
			"title": title, "view": "timeSeries", "region": "${AWS::Region}", "stat": stat, "period": 60, "metrics": lines,
		}})
	}
	byFamily := func(metric string) [][]any {
		var lines [][]any
		for _, fam := range fams {
			lines = append(lines, []any{metrics.Namespace, metric, metrics.DimFamily, fam})
		}
		return lines
	}
	add("Calls by family", "Sum", byFamily(metrics.Calls))
	add("Errors by family (any kind)", "Sum", byFamily(metrics.Errors))
	add("Server faults by family (internal, unavailable)", "Sum", byFamily(metrics.Faults))
	add("p99 latency by family (ms)", "p99", byFamily(metrics.Latency))
	add("Throttles by family", "Sum", byFamily(metrics.Throttles))
	add("Cold starts by family", "Sum", byFamily(metrics.ColdStarts))
	if len(connectorFunctions) > 0 {
		var counts [][]any
		for _, m := range []string{metrics.ConnectorCalls, metrics.ConnectorErrors, metrics.CacheHits, metrics.CacheMisses,
			metrics.ApprovalsRequested, metrics.ApprovalsGranted, metrics.ApprovalsDenied, metrics.ApprovalsExpired} {
			counts = append(counts, []any{metrics.Namespace, m, metrics.DimFamily, metrics.ConnectorsFamily})
		}
		add("Connectors: calls, cache, approvals", "Sum", counts)
		add("Connectors: p95 call latency (ms)", "p95", [][]any{{metrics.Namespace, metrics.ConnectorLatency, metrics.DimFamily, metrics.ConnectorsFamily}})
	}
	for _, q := range queues {
		add("Failed events waiting: "+q.Function, "Maximum", [][]any{{"AWS/SQS", "ApproximateNumberOfMessagesVisible", "QueueName", "${" + q.LogicalID + ".QueueName}"}})
	}
	if len(connectorFunctions) > 0 { // last, the width of the dashboard
		widgets = append(widgets, widget{Type: "log", X: 0, Y: (len(widgets) + 1) / 2 * 6, Width: 24, Height: 8, Properties: map[string]any{
			"title": "Connectors by tenant and connector (connector_health's figures, every instance)", "region": "${AWS::Region}",
			"view": "table", "query": ConnectorsQuery(connectorFunctions),
		}})
	}
	b, err := json.Marshal(map[string]any{"widgets": widgets})
	if err != nil {
		panic(err) // maps of strings and numbers always encode
	}
	return string(b)
}

// ConnectorsQuery returns the CloudWatch Logs Insights query that sums the
// connector records (package metrics) of the functions named, from their log
// groups, by tenant and connector: calls, errors, p50 and p95 latency, cache
// hits and misses, approvals by outcome, as connector_health shows them for
// one instance. Connector names are the tenants' own, unbounded, so they are
// properties of the records, not dimensions (a metric per connector would be
// billed monthly): this is how their per-connector figures are read. It is
// the dashboard's table (a log widget, whose query names its log groups
// with SOURCE, ${AWS::StackName} substituted by the template).
func ConnectorsQuery(functions []string) string {
	var b strings.Builder
	for _, f := range functions {
		fmt.Fprintf(&b, "SOURCE '/aws/lambda/${AWS::StackName}-%s' | ", f)
	}
	fmt.Fprintf(&b, "filter ispresent(connector) | stats sum(%s) as calls, sum(%s) as errors, pct(%s, 50) as p50_ms, pct(%s, 95) as p95_ms, "+
		"sum(%s) as cache_hits, sum(%s) as cache_misses, sum(%s) as approvals_requested, sum(%s) as approvals_granted, "+
		"sum(%s) as approvals_denied, sum(%s) as approvals_expired by tenant, connector | sort calls desc | limit 100",
		metrics.ConnectorCalls, metrics.ConnectorErrors, metrics.ConnectorLatency, metrics.ConnectorLatency,
		metrics.CacheHits, metrics.CacheMisses, metrics.ApprovalsRequested, metrics.ApprovalsGranted, metrics.ApprovalsDenied, metrics.ApprovalsExpired)
	return b.String()
}

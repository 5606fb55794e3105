// Package metrics writes CloudWatch embedded metric format (EMF) records: one
// JSON line per record, from which CloudWatch Logs extracts metrics without
// an API call. Every tool function writes one record per invocation
// (package lambdafn), the deployed gateway one per invocation and one for
// each call it refuses or whose function fails outright, and the connector
// functions one per connector event.
//
//	m := metrics.New(os.Stdout) // in Lambda; nil (off) locally
//	m.Call(metrics.Call{Family: "memory", Function: "memory_add_message", Latency: d, Kind: fault.KindOf(err), Tenant: c.Tenant})
//
// Dimensions are few and bounded: the family, the function (a tool name, or
// "gateway"), the error kind. Tenants, principals, traces and connector names
// are properties of the record, searchable in CloudWatch Logs Insights but not
// dimensions: a dimension value is a metric of its own, billed monthly, and
// tenants are unbounded.
package metrics

import (
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/rawjson"
)

// Namespace is the CloudWatch namespace of every metric.
const Namespace = "Switchboard"

// The dimensions.
const (
	DimFamily    = "Family"
	DimFunction  = "Function"
	DimErrorKind = "ErrorKind"
)

// The metrics of a call, each under the dimension sets (Family) and
// (Family, Function); ErrorsByKind under (Family, ErrorKind).
const (
	// Calls counts invocations (1 per record).
	Calls = "Calls"
	// Errors counts calls that failed, of any kind (a caller's mistake too).
	Errors = "Errors"
	// Faults counts calls that failed on the server's side (kinds internal
	// and unavailable): what the error-rate alarms watch.
	Faults = "Faults"
	// Throttles counts calls refused for a rate or concurrency limit (kind
	// rate_limited, or Lambda's TooManyRequestsException).
	Throttles = "Throttles"
	// ColdStarts counts first invocations of an instance.
	ColdStarts = "ColdStarts"
	// AuditFailures counts calls whose audit event could not be appended
	// (the call's effect stands).
	AuditFailures = "AuditFailures"
	// Latency is a call's duration in milliseconds.
	Latency = "Latency"
	// ErrorsByKind counts failed calls by their kind (dimension ErrorKind).
	ErrorsByKind = "ErrorsByKind"
)

// CallMetrics are the metrics every call record carries, in order.
var CallMetrics = []string{Calls, Errors, Faults, Throttles, ColdStarts, AuditFailures, Latency}

// The families of records that are not a tool's.
const (
	// GatewayFamily and GatewayFunction name the gateway's own records.
	GatewayFamily   = "gateway"
	GatewayFunction = "gateway"
)

// Emitter writes records to a writer, one JSON line per record, each in
// one Write. A nil *Emitter writes nothing: metrics are off. It is safe for
// concurrent use.
type Emitter struct {
	mu      sync.Mutex
	w       io.Writer
	invoked atomic.Bool // a call record has been written: the next is not a cold start
	now     func() time.Time
}

// New returns an Emitter writing to w (os.Stdout in Lambda, where each line
// reaches the function's log group).
func New(w io.Writer) *Emitter { return &Emitter{w: w, now: time.Now} }

// Call is one invocation's figures.
type Call struct {
	Family   string
	Function string
	Latency  time.Duration
	// Kind is the failure's kind; "" for a call that succeeded.
	Kind fault.Kind
	// AuditFailed says the call's audit event was lost.
	AuditFailed bool
	// Tenant, TraceID (the W3C trace id audit events carry), RequestID and
	// XRayTraceID (the X-Ray trace's root) are properties, not dimensions.
	Tenant, TraceID, RequestID, XRayTraceID string
}

// KindOf returns the kind of a call's failure for [Call]'s Kind: "" for
// none, else [fault.KindOf].
func KindOf(err error) fault.Kind {
	if err == nil {
		return ""
	}
	return fault.KindOf(err)
}

// Call writes the record of one invocation. The first record an Emitter
// writes this way is the instance's cold start.
func (e *Emitter) Call(c Call) {
	if e != nil {
		e.call(c, !e.invoked.Swap(true))
	}
}

// Failed writes the record of an invocation that could not write its own
// (its function crashed or timed out), on behalf of its function: the
// caller's instance had no cold start for it.
func (e *Emitter) Failed(c Call) {
	if e != nil {
		e.call(c, false)
	}
}

func (e *Emitter) call(c Call, cold bool) {
	failed, serverFault, throttled := outcome(c.Kind)
	b := e.begin(callDirective, c)
	b = appendCount(b, Calls, true)
	b = appendCount(b, Errors, failed)
	b = appendCount(b, Faults, serverFault)
	b = appendCount(b, Throttles, throttled)
	b = appendCount(b, ColdStarts, cold)
	b = appendCount(b, AuditFailures, c.AuditFailed)
	b = appendMilliseconds(b, Latency, c.Latency)
	e.finish(b, c)
}

// Throttled writes the record of a call refused before its function ran
// (the gateway's rate limits, or Lambda's concurrency): a throttle of the
// function's family, and nothing else, since the function did not run.
func (e *Emitter) Throttled(c Call) {
	if e == nil {
		return
	}
	c.Kind = fault.KindRateLimited
	e.finish(appendCount(e.begin(throttleDirective, c), Throttles, true), c)
}

// AuditFailed writes the record of a call whose audit event was lost after
// the call's own record was written (an event appended after the answer,
// package later): AuditFailures under the call's dimension sets, and nothing
// else, since the call itself was counted.
func (e *Emitter) AuditFailed(c Call) {
	if e == nil {
		return
	}
	c.Kind = ""
	e.finish(appendCount(e.begin(auditDirective, c), AuditFailures, true), c)
}

// outcome classifies a failure's kind: any failure, the server's, a throttle.
func outcome(k fault.Kind) (failed, serverFault, throttled bool) {
	switch k {
	case "":
		return false, false, false
	case fault.KindInternal, fault.KindUnavailable:
		return true, true, false
	case fault.KindRateLimited:
		return true, false, true
	}
	return true, false, false
}

var (
	callDirective     = directive([][]string{{DimFamily}, {DimFamily, DimFunction}}, CallMetrics...)
	throttleDirective = directive([][]string{{DimFamily}, {DimFamily, DimFunction}}, Throttles)
	auditDirective    = directive([][]string{{DimFamily}, {DimFamily, DimFunction}}, AuditFailures)
	kindDirective     = directive([][]string{{DimFamily, DimErrorKind}}, ErrorsByKind)
)

// begin starts the record of call c in a pooled buffer: the metadata
// (directive, and the by-kind one for a failure) and the dimensions.
func (e *Emitter) begin(directive string, c Call) []byte {
	b := e.start(directive)
	if c.Kind != "" {
		b = append(b, ',')
		b = append(b, kindDirective...)
	}
	b = append(b, "]}"...)
	b = appendString(b, DimFamily, c.Family)
	return appendString(b, DimFunction, c.Function)
}

// finish ends the record of call c (the by-kind members, c's properties)
// and writes it.
func (e *Emitter) finish(b []byte, c Call) {
	if c.Kind != "" {
		b = appendString(b, DimErrorKind, string(c.Kind))
		b = appendCount(b, ErrorsByKind, true)
	}
	e.end(appendProperties(b, c.Tenant, c.TraceID, c.RequestID, c.XRayTraceID))
}

// start begins a record in a pooled buffer: the metadata's start, its
// timestamp and directive.
func (e *Emitter) start(directive string) []byte {
	b := append((*buffers.Get().(*[]byte))[:0], `{"_aws":{"Timestamp":`...)
	b = strconv.AppendInt(b, e.now().UnixMilli(), 10)
	b = append(b, `,"CloudWatchMetrics":[`...)
	return append(b, directive...)
}

// end closes the record in b, writes it and returns b to the pool.
func (e *Emitter) end(b []byte) {
	b = append(b, "}\n"...)
	e.mu.Lock()
	e.w.Write(b) // a lost metric line is not worth failing a call
	e.mu.Unlock()
	if cap(b) <= maxPooled {
		buffers.Put(&b)
	}
}

// maxPooled is the largest buffer kept for reuse.
const maxPooled = 16 << 10

// buffers hold records while they are written (*[]byte).
var buffers = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// directive returns the JSON of a metric directive of the namespace: its
// dimension sets and its metrics, each a count but Latency.
func directive(dims [][]string, names ...string) string {
	b := []byte(`{"Namespace":"` + Namespace + `","Dimensions":[`)
	for i, set := range dims {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		for j, d := range set {
			if j > 0 {
				b = append(b, ',')
			}
			b = rawjson.AppendString(b, d)
		}
		b = append(b, ']')
	}
	b = append(b, `],"Metrics":[`...)
	for i, n := range names {
		if i > 0 {
			b = append(b, ',')
		}
		unit := "Count"
		if n == Latency || n == ConnectorLatency {
			unit = "Milliseconds"
		}
		b = append(b, `{"Name":`...)
		b = rawjson.AppendString(b, n)
		b = append(b, `,"Unit":"`+unit+`"}`...)
	}
	return string(append(b, "]}"...))
}

// appendString appends the member ,"name":"value".
func appendString(b []byte, name, value string) []byte {
	b = append(b, `,"`...)
	b = append(b, name...)
	b = append(b, `":`...)
	return rawjson.AppendString(b, value)
}

// appendCount appends the member ,"name":1 or 0.
func appendCount(b []byte, name string, one bool) []byte {
	b = append(b, `,"`...)
	b = append(b, name...)
	if one {
		return append(b, `":1`...)
	}
	return append(b, `":0`...)
}

// The connector metrics, under the dimension set (Family) of the connectors
// family: the connector and its tenant are properties.
const (
	ConnectorCalls     = "ConnectorCalls"
	ConnectorErrors    = "ConnectorErrors"
	ConnectorLatency   = "ConnectorLatency"
	CacheHits          = "ConnectorCacheHits"
	CacheMisses        = "ConnectorCacheMisses"
	ApprovalsRequested = "ApprovalsRequested"
	ApprovalsGranted   = "ApprovalsGranted"
	ApprovalsDenied    = "ApprovalsDenied"
	ApprovalsExpired   = "ApprovalsExpired"
)

// ConnectorsFamily is the connectors family's name (catalog.ConnectorsFamily).
const ConnectorsFamily = "connectors"

// connectorDirectives are the connector metrics' directives: the calls'
// and each count's by name. They are built on first use, since only the
// connectors' functions write them.
var connectorDirectives = sync.OnceValues(func() (call string, count map[string]string) {
	count = map[string]string{}
	for _, n := range []string{CacheHits, CacheMisses, ApprovalsRequested, ApprovalsGranted, ApprovalsDenied, ApprovalsExpired} {
		count[n] = directive([][]string{{DimFamily}}, n)
	}
	return directive([][]string{{DimFamily}}, ConnectorCalls, ConnectorErrors, ConnectorLatency), count
})

// ConnectorCall writes the record of one call of a tenant's connector
// (an upstream server's tool, prompt or resource): ConnectorCalls,
// ConnectorErrors, ConnectorLatency.
func (e *Emitter) ConnectorCall(tenant, connector string, d time.Duration, failed bool) {
	if e == nil {
		return
	}
	call, _ := connectorDirectives()
	b := appendString(append(e.start(call), "]}"...), DimFamily, ConnectorsFamily)
	b = appendCount(b, ConnectorCalls, true)
	b = appendCount(b, ConnectorErrors, failed)
	b = appendMilliseconds(b, ConnectorLatency, d)
	e.end(appendConnector(b, tenant, connector))
}

// ConnectorCount writes a record counting one event of a tenant's
// connector: metric is CacheHits, CacheMisses or one of the Approvals
// metrics; any other name writes nothing.
func (e *Emitter) ConnectorCount(tenant, connector, metric string) {
	_, count := connectorDirectives()
	d, ok := count[metric]
	if e == nil || !ok {
		return
	}
	b := appendString(append(e.start(d), "]}"...), DimFamily, ConnectorsFamily)
	e.end(appendConnector(appendCount(b, metric, true), tenant, connector))
}

func appendConnector(b []byte, tenant, connector string) []byte {
	return appendString(appendString(b, "tenant", tenant), "connector", connector)
}

// appendMilliseconds appends the member ,"name":d in milliseconds, to the
// microsecond.
func appendMilliseconds(b []byte, name string, d time.Duration) []byte {
	b = append(b, `,"`...)
	b = append(b, name...)
	b = append(b, `":`...)
	return strconv.AppendFloat(b, float64(d.Microseconds())/1000, 'f', -1, 64)
}

// appendProperties appends the properties that are set.
func appendProperties(b []byte, tenant, traceID, requestID, xrayTraceID string) []byte {
	for _, p := range [...]struct{ name, value string }{
		{"tenant", tenant}, {"trace_id", traceID}, {"request_id", requestID}, {"xray_trace_id", xrayTraceID},
	} {
		if p.value != "" {
			b = appendString(b, p.name, p.value)
		}
	}
	return b
}

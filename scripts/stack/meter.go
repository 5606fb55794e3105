package main

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/switchboard-dev/switchboard/shared/lambdatest"
)

// Usage is what the stack's services billed over some calls, in the units
// AWS bills them: scripts/cost prices it.
type Usage struct {
	// Invocations and BilledMS are each function's invocations and billed
	// duration (the Runtime API's answer time less its hand-out time,
	// rounded up to the millisecond), by deployed name less the stack's
	// prefix (invoke.FunctionName of its path, or "gateway").
	Invocations map[string]float64 `json:"invocations"`
	BilledMS    map[string]float64 `json:"billed_ms"`
	// ReadUnits and WriteUnits are DynamoDB's consumed capacity, as
	// DynamoDB Local reports it for on-demand request units.
	ReadUnits  float64 `json:"dynamodb_read_units"`
	WriteUnits float64 `json:"dynamodb_write_units"`
	// S3Tier1 counts PUT, COPY, POST and LIST requests; S3Tier2 GET and HEAD
	// (S3's two request prices; DELETE is free).
	S3Tier1 float64 `json:"s3_tier1_requests"`
	S3Tier2 float64 `json:"s3_tier2_requests"`
	// Executions counts the Express state machines' synchronous executions;
	// ExecutionMBMS sums their billed memory times billed duration (MB x ms,
	// from StartSyncExecution's billingDetails).
	Executions    float64 `json:"sfn_executions"`
	ExecutionMBMS float64 `json:"sfn_billed_mb_ms"`
	// KMSRequests counts KMS API requests.
	KMSRequests float64 `json:"kms_requests"`
}

func newUsage() Usage {
	return Usage{Invocations: map[string]float64{}, BilledMS: map[string]float64{}}
}

// per returns u divided by n: the usage of one of n calls.
func (u Usage) per(n int) Usage {
	f := float64(n)
	out := newUsage()
	for k, v := range u.Invocations {
		out.Invocations[k], out.BilledMS[k] = v/f, u.BilledMS[k]/f
	}
	out.ReadUnits, out.WriteUnits = u.ReadUnits/f, u.WriteUnits/f
	out.S3Tier1, out.S3Tier2 = u.S3Tier1/f, u.S3Tier2/f
	out.Executions, out.ExecutionMBMS = u.Executions/f, u.ExecutionMBMS/f
	out.KMSRequests = u.KMSRequests / f
	return out
}

// meter collects [Usage] from the stack's stand-ins while it runs.
type meter struct {
	mu sync.Mutex
	u  Usage
}

func newMeter() *meter {
	return &meter{u: newUsage()}
}

// take returns the usage since the last take and starts afresh.
func (m *meter) take() Usage {
	m.mu.Lock()
	defer m.mu.Unlock()
	u := m.u
	m.u = newUsage()
	return u
}

// observer counts the invocations of the function called name.
func (m *meter) observer(name string) func(*lambdatest.Result, bool) {
	return func(res *lambdatest.Result, _ bool) {
		ms := math.Ceil(float64(res.Answered.Sub(res.Received).Microseconds()) / 1000)
		m.mu.Lock()
		m.u.Invocations[name]++
		m.u.BilledMS[name] += max(ms, 1)
		m.mu.Unlock()
	}
}

// s3Request counts a request the S3 stand-in served.
func (m *meter) s3Request(r *http.Request) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch r.Method {
	case http.MethodPut, http.MethodPost:
		m.u.S3Tier1++
	case http.MethodGet, http.MethodHead:
		_, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		if key == "" && r.Method == http.MethodGet { // a LIST
			m.u.S3Tier1++
		} else {
			m.u.S3Tier2++
		}
	}
}

// dynamoProxy forwards to DynamoDB at target, asking every request that can
// report it to return its consumed capacity (ReturnConsumedCapacity TOTAL),
// and adds what each answer reports.
func (m *meter) dynamoProxy(target *url.URL) http.Handler {
	p := proxyTo(target, func(r *http.Request) {
		op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "DynamoDB_20120810.")
		if !reportsCapacity[op] || r.Body == nil {
			return
		}
		body, err := io.ReadAll(r.Body)
		var req map[string]any
		if err != nil || json.Unmarshal(body, &req) != nil {
			r.Body = io.NopCloser(bytes.NewReader(body))
			return
		}
		req["ReturnConsumedCapacity"] = "TOTAL"
		body, _ = json.Marshal(req)
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		r.Header.Set("Content-Length", strconv.Itoa(len(body)))
	})
	p.ModifyResponse = func(resp *http.Response) error {
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		if err != nil {
			return err
		}
		var out struct{ ConsumedCapacity json.RawMessage }
		if json.Unmarshal(body, &out) != nil || len(out.ConsumedCapacity) == 0 {
			return nil
		}
		var list []consumedCapacity
		if json.Unmarshal(out.ConsumedCapacity, &list) != nil {
			var one consumedCapacity
			if json.Unmarshal(out.ConsumedCapacity, &one) != nil {
				return nil
			}
			list = []consumedCapacity{one}
		}
		write := strings.Contains(writeOps, resp.Request.Header.Get("X-Amz-Target")+",")
		m.mu.Lock()
		defer m.mu.Unlock()
		for _, c := range list {
			r, w := c.ReadCapacityUnits, c.WriteCapacityUnits
			if r == 0 && w == 0 { // only the total: the operation says which
				if write {
					w = c.CapacityUnits
				} else {
					r = c.CapacityUnits
				}
			}
			m.u.ReadUnits += r
			m.u.WriteUnits += w
		}
		return nil
	}
	return p
}

// consumedCapacity is DynamoDB's ConsumedCapacity.
type consumedCapacity struct {
	CapacityUnits, ReadCapacityUnits, WriteCapacityUnits float64
}

// reportsCapacity are the DynamoDB operations that take ReturnConsumedCapacity.
var reportsCapacity = map[string]bool{
	"GetItem": true, "PutItem": true, "UpdateItem": true, "DeleteItem": true, "Query": true, "Scan": true,
	"BatchGetItem": true, "BatchWriteItem": true, "TransactGetItems": true, "TransactWriteItems": true,
}

// writeOps are the X-Amz-Target values of the operations that consume write units.
const writeOps = "DynamoDB_20120810.PutItem,DynamoDB_20120810.UpdateItem,DynamoDB_20120810.DeleteItem,DynamoDB_20120810.BatchWriteItem,DynamoDB_20120810.TransactWriteItems,"

// sfnProxy forwards to the Step Functions stand-in at target and adds each
// synchronous execution's billing details.
func (m *meter) sfnProxy(target *url.URL) http.Handler {
	p := proxyTo(target, nil)
	p.ModifyResponse = func(resp *http.Response) error {
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		if err != nil {
			return err
		}
		var out struct {
			BillingDetails *struct {
				BilledMemoryUsedInMB, BilledDurationInMilliseconds float64
			} `json:"billingDetails"`
		}
		if json.Unmarshal(body, &out) == nil && out.BillingDetails != nil {
			m.mu.Lock()
			m.u.Executions++
			m.u.ExecutionMBMS += out.BillingDetails.BilledMemoryUsedInMB * out.BillingDetails.BilledDurationInMilliseconds
			m.mu.Unlock()
		}
		return nil
	}
	return p
}

// kmsProxy forwards to KMS at target, counting requests.
func (m *meter) kmsProxy(target *url.URL) http.Handler {
	p := proxyTo(target, nil)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		m.u.KMSRequests++
		m.mu.Unlock()
		p.ServeHTTP(w, r)
	})
}

// proxyTo returns a reverse proxy to target that lets edit (if not nil)
// change each outgoing request.
func proxyTo(target *url.URL, edit func(*http.Request)) *httputil.ReverseProxy {
	return &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(target)
		pr.Out.Host = target.Host
		if edit != nil {
			edit(pr.Out)
		}
	}}
}

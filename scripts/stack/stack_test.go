package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/apigw"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/config/secrets"
	"github.com/switchboard-dev/switchboard/shared/config/secrets/ssmtest"
	"github.com/switchboard-dev/switchboard/shared/elicit"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/keyfile"
	"github.com/switchboard-dev/switchboard/shared/lambdatest"
)

func readTemplate(t *testing.T, params map[string]string) (*Template, error) {
	t.Helper()
	data, err := os.ReadFile("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return ReadTemplate(data, Site{StackName: "sbtest", Region: region, Account: account, Suffix: "0123456789ab", Parameters: params,
		Keys: map[string]string{"ConnectorKey": keyARN}})
}

const keyARN = "arn:aws:kms:us-east-1:111122223333:key/test"

func TestReadTemplateWiresTheFunctionsAsTheGatewayAndPipelineCallThem(t *testing.T) {
	tmpl, err := readTemplate(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*Function{}
	var gateway *Function
	for _, f := range tmpl.Functions {
		byName[f.Name] = f
		if len(f.HTTP) > 0 {
			gateway = f
		}
		if got := f.Env[config.EnvTable]; got != tmpl.Table || !strings.HasPrefix(got, "sbtest-Table-") {
			t.Errorf("%s: %s = %q, want the table %q", f.Name, config.EnvTable, got, tmpl.Table)
		}
	}
	if gateway == nil {
		t.Fatal("no function has API events")
	}
	prefix := gateway.Env[config.EnvFunctionPrefix]
	if prefix != "sbtest-" {
		t.Errorf("the gateway's prefix is %q, want sbtest-", prefix)
	}
	for _, f := range catalog.Default().Functions() {
		if byName[prefix+invoke.FunctionName(f.Path)] == nil {
			t.Errorf("the gateway invokes %s for %s, which the template does not name", prefix+invoke.FunctionName(f.Path), f.Path)
		}
	}
	if len(tmpl.StateMachines) != 1 {
		t.Fatalf("%d state machines, want the pipeline", len(tmpl.StateMachines))
	}
	sm := tmpl.StateMachines[0]
	for k, arn := range sm.Substitutions {
		if f := byName[strings.TrimPrefix(arn, "arn:aws:lambda:us-east-1:123456789012:function:")]; f == nil || f.ARN != arn {
			t.Errorf("substitution %s = %s, the ARN of no function", k, arn)
		}
	}
	runsPipeline := 0
	for _, f := range tmpl.Functions {
		if arn, ok := f.Env[config.EnvPipelineARN]; ok {
			runsPipeline++
			if arn != sm.ARN {
				t.Errorf("%s runs %s, want the state machine %s", f.Name, arn, sm.ARN)
			}
		}
		if b, ok := f.Env[config.EnvBucket]; ok && b != tmpl.Bucket {
			t.Errorf("%s: bucket %s, want %s", f.Name, b, tmpl.Bucket)
		}
		for _, ev := range f.S3 {
			if ev.Bucket != tmpl.Bucket {
				t.Errorf("%s is notified by bucket %s, want %s", f.Name, ev.Bucket, tmpl.Bucket)
			}
		}
		if k, ok := f.Env[config.EnvConnectorKey]; ok && k != keyARN {
			t.Errorf("%s: connector key %s, want the local KMS key %s (ConnectorKeyMode kms)", f.Name, k, keyARN)
		}
	}
	if runsPipeline == 0 {
		t.Error("no function runs the pipeline")
	}
	if _, err := elicit.ParseKeyring(tmpl.Secrets[gateway.Env[config.EnvRequestStateKeys]]); err != nil {
		t.Errorf("the secret of the gateway's request-state keys %q: %v", gateway.Env[config.EnvRequestStateKeys], err)
	}
	if _, ok := gateway.Env[config.EnvTenantRoleARN]; ok {
		t.Errorf("%s is set though TenantIsolation is off (AWS::NoValue)", config.EnvTenantRoleARN)
	}
}

// TestReadTemplateMakesWhatConnectorKeyModeChooses checks the connectors'
// key by mode: the template's KMS key, which the stack must make in the
// local KMS, or the key ring's secret, which its Secrets Manager serves.
func TestReadTemplateMakesWhatConnectorKeyModeChooses(t *testing.T) {
	tests := []struct {
		mode     string
		wantKeys []string
	}{
		{"kms", []string{"ConnectorKey"}},
		{"secret", nil},
	}
	for _, tc := range tests {
		t.Run(tc.mode, func(t *testing.T) {
			tmpl, err := readTemplate(t, map[string]string{"ConnectorKeyMode": tc.mode})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(tmpl.Keys, tc.wantKeys) {
				t.Errorf("keys to make %v, want %v", tmpl.Keys, tc.wantKeys)
			}
			connects := 0
			for _, f := range tmpl.Functions {
				k, ok := f.Env[config.EnvConnectorKey]
				if !ok {
					continue
				}
				connects++
				if tc.mode == "kms" {
					if k != keyARN {
						t.Errorf("%s: connector key %s, want the local KMS key %s", f.Name, k, keyARN)
					}
				} else if _, err := keyfile.Parse(tmpl.Secrets[k]); err != nil {
					t.Errorf("%s: connector key %s is no secret holding a key ring: %v", f.Name, k, err)
				}
			}
			if connects == 0 {
				t.Error("no function has a connector key")
			}
		})
	}
}

func TestReadTemplateTakesParametersAsCloudFormationDoes(t *testing.T) {
	tests := []struct {
		name    string
		params  map[string]string
		wantErr string
	}{
		{"an allowed value is taken", map[string]string{"Embedder": "offline", "AnonymousTenant": "ci"}, ""},
		{"a value not allowed is refused", map[string]string{"Embedder": "magic"}, "parameter Embedder"},
		{"a value off the pattern is refused", map[string]string{"AnonymousTenant": "Not A Tenant"}, "parameter AnonymousTenant"},
		{"an unknown parameter is refused", map[string]string{"Nope": "1"}, "no such parameter"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tmpl, err := readTemplate(t, tc.params)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				for _, f := range tmpl.Functions {
					if _, ok := f.Env[config.EnvAnonymousTenant]; ok && f.Env[config.EnvAnonymousTenant] != "ci" {
						t.Errorf("%s: anonymous tenant %q, want the parameter's ci", f.Name, f.Env[config.EnvAnonymousTenant])
					}
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("err = %v, want one with %q", err, tc.wantErr)
			}
		})
	}
}

func TestBuildCommandIsTheMakefilesForThisMachine(t *testing.T) {
	makefile, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	env, args, err := buildCommand(makefile, "GatewayFunction", "/out/bootstrap")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"GOOS=linux", "GOARCH=" + runtime.GOARCH, "CGO_ENABLED=0"} {
		if !slices.Contains(env, want) {
			t.Errorf("env %v lacks %s", env, want)
		}
	}
	want := []string{"build", "-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w", "-o", "/out/bootstrap", "./functions/gateway"}
	if diff := cmp.Diff(want, args); diff != "" {
		t.Errorf("args mismatch (-want +got):\n%s", diff)
	}
	bad := []byte("build-X:\n\tCGO_ENABLED=0 GOOS=linux go build -o $(ARTIFACTS_DIR)/bootstrap ./x\n")
	if _, _, err := buildCommand(bad, "X", "/out"); err == nil || !strings.Contains(err.Error(), "lambda.norpc") {
		t.Errorf("a build without lambda.norpc: err = %v", err)
	}
}

func TestFrontDoorSendsTheHTTPAPIsEventsAndAnswers(t *testing.T) {
	var got events.APIGatewayV2HTTPRequest
	invoke := func(_ context.Context, payload []byte, _ func(lambdatest.Chunk)) (*lambdatest.Result, error) {
		got = events.APIGatewayV2HTTPRequest{}
		if err := json.Unmarshal(payload, &got); err != nil {
			return nil, err
		}
		if got.RawPath == "/boom" {
			return &lambdatest.Result{Error: &lambdatest.FunctionError{Type: "Runtime.ExitError", Message: "boom"}}, nil
		}
		resp, _ := json.Marshal(events.APIGatewayV2HTTPResponse{StatusCode: 202, Headers: map[string]string{"Content-Type": "text/plain"},
			Cookies: []string{"a=1"}, Body: "aGk=", IsBase64Encoded: true})
		return &lambdatest.Result{Payload: resp}, nil
	}
	h, err := frontDoorHandler([]route{
		{event: HTTPEvent{Type: "HttpApi", Method: "ANY", Path: "/mcp", PayloadFormat: "2.0"}, invoke: invoke},
		{event: HTTPEvent{Type: "HttpApi", Method: "GET", Path: "/servers/{name}/capabilities", PayloadFormat: "2.0"}, invoke: invoke},
		{event: HTTPEvent{Type: "HttpApi", Method: "GET", Path: "/boom", PayloadFormat: "2.0"}, invoke: invoke},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	req, _ := http.NewRequest("POST", srv.URL+"/mcp?a=1&a=2", strings.NewReader(`{"jsonrpc":"2.0"}`))
	req.Header.Add("X-Thing", "one")
	req.Header.Add("X-Thing", "two")
	req.Header.Set("Cookie", "s=1; t=2")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 202 || string(body) != "hi" || resp.Header.Get("Set-Cookie") != "a=1" {
		t.Errorf("answer %d %q cookie %q, want 202 \"hi\" a=1", resp.StatusCode, body, resp.Header.Get("Set-Cookie"))
	}
	if got.Version != "2.0" || got.RouteKey != "ANY /mcp" || got.RawQueryString != "a=1&a=2" || got.Body != `{"jsonrpc":"2.0"}` ||
		got.IsBase64Encoded || got.Headers["x-thing"] != "one,two" || !slices.Equal(got.Cookies, []string{"s=1", "t=2"}) ||
		got.QueryStringParameters["a"] != "1,2" || got.RequestContext.HTTP.Method != "POST" || got.RequestContext.Stage != "$default" {
		t.Errorf("event %+v", got)
	}

	resp, err = http.Get(srv.URL + "/servers/memory/capabilities")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got.PathParameters["name"] != "memory" || got.RouteKey != "GET /servers/{name}/capabilities" {
		t.Errorf("path parameters %v, route %s", got.PathParameters, got.RouteKey)
	}
	for path, want := range map[string]int{"/boom": 500, "/nowhere": 404} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want || !strings.Contains(string(b), `"message"`) {
			t.Errorf("%s: %d %s, want %d with a message", path, resp.StatusCode, b, want)
		}
	}
}

func TestFrontDoorRefusesAnEventFormatItHasNoStandInFor(t *testing.T) {
	_, err := frontDoorHandler([]route{{event: HTTPEvent{Type: "Api", Method: "ANY", Path: "/mcp", PayloadFormat: "1.0", Stage: "v1"}}})
	if err == nil || !strings.Contains(err.Error(), "no stand-in for Api events") {
		t.Errorf("err = %v", err)
	}
}

// restRoute is a route of the streaming REST API at stage v1.
func restRoute(method, path string, invoke invokeFunc) route {
	return route{event: HTTPEvent{Type: "Api", Method: method, Path: path, PayloadFormat: "1.0", Streaming: true, Stage: "v1"}, invoke: invoke}
}

// TestRestFrontDoorRoutesAsAPIGatewayDoes: requests under the stage reach
// the route of their resource and method with the REST API's event (the
// path without the stage, the resource pattern, its path parameters, the
// stage in the request context); any other request is answered 403
// Missing Authentication Token, as a REST API answers a resource or method
// it does not have; a function that fails is answered 502.
func TestRestFrontDoorRoutesAsAPIGatewayDoes(t *testing.T) {
	var mu sync.Mutex
	var got events.APIGatewayProxyRequest
	invoke := func(_ context.Context, payload []byte, onChunk func(lambdatest.Chunk)) (*lambdatest.Result, error) {
		mu.Lock()
		defer mu.Unlock()
		got = events.APIGatewayProxyRequest{}
		if err := json.Unmarshal(payload, &got); err != nil {
			return nil, err
		}
		if got.Path == "/boom" {
			return &lambdatest.Result{Error: &lambdatest.FunctionError{Type: "Runtime.ExitError", Message: "boom"}}, nil
		}
		answer := append([]byte(`{"statusCode":202,"headers":{"Content-Type":"text/plain"}}`), apigw.StreamDelimiter...)
		answer = append(answer, got.HTTPMethod+" "+got.Resource...)
		onChunk(lambdatest.Chunk{Data: answer})
		return &lambdatest.Result{Payload: answer}, nil
	}
	h, err := frontDoorHandler([]route{
		restRoute("ANY", "/mcp", invoke),
		restRoute("GET", "/servers/{name}/capabilities", invoke),
		restRoute("ANY", "/oauth/{proxy+}", invoke),
		restRoute("GET", "/boom", invoke),
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	tests := []struct {
		name, method, path string
		wantStatus         int
		wantBody           string
		wantEvent          events.APIGatewayProxyRequest
	}{
		{"ANY takes every method", "DELETE", "/v1/mcp", 202, "DELETE /mcp", events.APIGatewayProxyRequest{Path: "/mcp", Resource: "/mcp"}},
		{"a {name} is a path parameter", "GET", "/v1/servers/memory/capabilities", 202, "GET /servers/{name}/capabilities",
			events.APIGatewayProxyRequest{Path: "/servers/memory/capabilities", Resource: "/servers/{name}/capabilities", PathParameters: map[string]string{"name": "memory"}}},
		{"a {proxy+} takes the rest of the path", "POST", "/v1/oauth/a/b", 202, "POST /oauth/{proxy+}",
			events.APIGatewayProxyRequest{Path: "/oauth/a/b", Resource: "/oauth/{proxy+}", PathParameters: map[string]string{"proxy": "a/b"}}},
		{"a method the resource lacks is refused", "POST", "/v1/servers/memory/capabilities", 403, `{"message":"Missing Authentication Token"}`, events.APIGatewayProxyRequest{}},
		{"an unknown resource is refused", "GET", "/v1/nowhere", 403, `{"message":"Missing Authentication Token"}`, events.APIGatewayProxyRequest{}},
		{"a path outside the stage is refused", "POST", "/mcp", 403, `{"message":"Missing Authentication Token"}`, events.APIGatewayProxyRequest{}},
		{"a function error is a 502", "GET", "/v1/boom", 502, `{"message":"Internal server error"}`, events.APIGatewayProxyRequest{Path: "/boom", Resource: "/boom"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			got = events.APIGatewayProxyRequest{}
			mu.Unlock()
			req, _ := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(`{}`))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.wantStatus || string(body) != tc.wantBody {
				t.Errorf("answered %d %q, want %d %q", resp.StatusCode, body, tc.wantStatus, tc.wantBody)
			}
			mu.Lock()
			defer mu.Unlock()
			if tc.wantEvent.Path == "" {
				if got.Path != "" {
					t.Errorf("the function was invoked for %s", got.Path)
				}
				return
			}
			ev := events.APIGatewayProxyRequest{Path: got.Path, Resource: got.Resource, PathParameters: got.PathParameters}
			if diff := cmp.Diff(tc.wantEvent, ev); diff != "" {
				t.Errorf("event mismatch (-want +got):\n%s", diff)
			}
			if got.RequestContext.Stage != "v1" || got.RequestContext.Path != "/v1"+got.Path || got.RequestContext.ResourcePath != got.Resource || got.HTTPMethod != tc.method {
				t.Errorf("request context %+v, method %s", got.RequestContext, got.HTTPMethod)
			}
		})
	}
}

// TestRestFrontDoorRelaysTheGatewaysStreamAsItArrives runs a function
// built as the gateway answers the streaming REST API (apigw's streaming
// handler) behind the front door: it sends its first event, then waits for
// a file the test creates only once that event has reached the client,
// before it sends the second. A front door that buffered the answer would
// deliver nothing until the function gave up waiting.
func TestRestFrontDoorRelaysTheGatewaysStreamAsItArrives(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a function")
	}
	bin := filepath.Join(t.TempDir(), "bootstrap")
	if err := lambdatest.Build("./testdata/streamer", bin); err != nil {
		t.Fatal(err)
	}
	fn := lambdatest.NewFunction(bin, nil, &lambdatest.FunctionOptions{Timeout: time.Minute})
	defer fn.Close()
	h, err := frontDoorHandler([]route{restRoute("GET", "/events/{name}", invoker(fn))})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	release := filepath.Join(t.TempDir(), "release")
	req, _ := http.NewRequest("GET", srv.URL+"/v1/events/x", nil)
	req.Header.Set("X-Release", release)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("answered %d %v, want 200 and the function's event stream", resp.StatusCode, resp.Header)
	}
	lines := bufio.NewReader(resp.Body)
	first, err := lines.ReadString('\n')
	if err != nil || first != "data: /events/x\n" {
		t.Fatalf("first event %q, %v; want the path without the stage", first, err)
	}
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(lines)
	if err != nil || string(rest) != "\ndata: released\n\n" {
		t.Errorf("the rest of the stream %q, %v; want the second event, sent once the first had arrived", rest, err)
	}
}

func TestS3StandInNotifiesTheSubscribedFunctionsAsS3Does(t *testing.T) {
	var mu sync.Mutex
	var got []events.S3EventRecord
	done := make(chan struct{}, 10)
	invoke := func(_ context.Context, payload []byte, _ func(lambdatest.Chunk)) (*lambdatest.Result, error) {
		var e events.S3Event
		json.Unmarshal(payload, &e)
		mu.Lock()
		got = append(got, e.Records...)
		mu.Unlock()
		done <- struct{}{}
		return &lambdatest.Result{Payload: []byte(`null`)}, nil
	}
	const bucket = "switchboard-test"
	s3h, err := newS3StandIn(bucket, region, []s3Subscriber{{name: "indexer", invoke: invoke,
		event: S3Event{Bucket: bucket, Events: []string{"s3:ObjectCreated:*", "s3:ObjectRemoved:*"}, Prefix: "tenants/"}}}, newMeter(), nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s3h)
	defer srv.Close()
	client := awss3.New(awss3.Options{Region: region, BaseEndpoint: aws.String(srv.URL), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider("k", "s", "")})
	ctx := context.Background()
	for _, key := range []string{"tenants/acme/documents/kb/my doc.md", "elsewhere/x.md"} {
		if _, err := client.PutObject(ctx, &awss3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader("hello")}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := client.DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String("tenants/acme/documents/kb/my doc.md")}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("no notification within 5s")
		}
	}
	mu.Lock()
	defer mu.Unlock()
	slices.SortFunc(got, func(a, b events.S3EventRecord) int {
		return strings.Compare(a.S3.Object.Sequencer, b.S3.Object.Sequencer)
	})
	var summary []string
	for _, r := range got {
		summary = append(summary, r.EventName+" "+r.S3.Bucket.Name+" "+r.S3.Object.Key)
	}
	want := []string{
		"ObjectCreated:Put switchboard-test tenants/acme/documents/kb/my+doc.md",
		"ObjectRemoved:Delete switchboard-test tenants/acme/documents/kb/my+doc.md",
	}
	if diff := cmp.Diff(want, summary); diff != "" {
		t.Errorf("notifications mismatch (-want +got):\n%s", diff)
	}
}

func TestMeterAddsWhatDynamoDBAndStepFunctionsReport(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		json.NewDecoder(r.Body).Decode(&req)
		switch r.Header.Get("X-Amz-Target") {
		case "DynamoDB_20120810.PutItem":
			if req["ReturnConsumedCapacity"] != "TOTAL" {
				t.Errorf("PutItem went without ReturnConsumedCapacity: %v", req)
			}
			io.WriteString(w, `{"ConsumedCapacity":{"TableName":"t","CapacityUnits":2}}`)
		case "DynamoDB_20120810.BatchGetItem":
			io.WriteString(w, `{"ConsumedCapacity":[{"TableName":"t","CapacityUnits":1.5},{"TableName":"u","CapacityUnits":0.5}]}`)
		default:
			io.WriteString(w, `{"billingDetails":{"billedMemoryUsedInMB":64,"billedDurationInMilliseconds":200}}`)
		}
	}))
	defer backend.Close()
	m := newMeter()
	target, _ := url.Parse(backend.URL)
	dynamo := httptest.NewServer(m.dynamoProxy(target))
	defer dynamo.Close()
	sfn := httptest.NewServer(m.sfnProxy(target))
	defer sfn.Close()
	for _, c := range []struct{ url, target string }{
		{dynamo.URL, "DynamoDB_20120810.PutItem"}, {dynamo.URL, "DynamoDB_20120810.BatchGetItem"}, {sfn.URL, "AWSStepFunctions.StartSyncExecution"},
	} {
		req, _ := http.NewRequest("POST", c.url, strings.NewReader(`{"TableName":"t"}`))
		req.Header.Set("X-Amz-Target", c.target)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	m.observer("gateway")(&lambdatest.Result{Received: time.Unix(0, 0), Answered: time.Unix(0, int64(2500*time.Microsecond))}, false)
	got := m.take()
	want := Usage{Invocations: map[string]float64{"gateway": 1}, BilledMS: map[string]float64{"gateway": 3},
		ReadUnits: 2, WriteUnits: 2, Executions: 1, ExecutionMBMS: 64 * 200}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("usage mismatch (-want +got):\n%s", diff)
	}
}

func TestReadTemplateFindsAFrontDoorDeclaredAsAPIGatewayResources(t *testing.T) {
	data, err := os.ReadFile("testdata/frontdoors.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		frontDoor string
		want      []HTTPEvent
	}{
		{"RestStreaming", []HTTPEvent{{Type: "Api", Method: "GET", Path: "/servers/{name}", PayloadFormat: "1.0", Streaming: true, Stage: "prod"}}},
		{"HttpApi", []HTTPEvent{{Type: "HttpApi", Method: "ANY", Path: "/mcp", PayloadFormat: "2.0"}}},
	}
	for _, tc := range tests {
		t.Run(tc.frontDoor, func(t *testing.T) {
			tmpl, err := ReadTemplate(data, Site{StackName: "s", Region: region, Account: account, Suffix: "abc", Parameters: map[string]string{"FrontDoor": tc.frontDoor}})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, tmpl.Functions[0].HTTP); diff != "" {
				t.Errorf("routes mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestKeyStoreSSMRunsTheKeyRingFunctionAsCloudFormationDoes checks the stack
// with KeyStore ssm: the template's Custom::KeyRing resources are created by
// the keyring function's bootstrap, invoked with Create requests whose
// answers reach the stack's ResponseURL, in the SSM stand-in; the second
// reading gives the gateway and the connector functions the parameters'
// references, which read back, as they do at start, as the key rings
// elicit and seal/localkey accept.
func TestKeyStoreSSMRunsTheKeyRingFunctionAsCloudFormationDoes(t *testing.T) {
	data, err := os.ReadFile("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	site := Site{StackName: "sbtest", Region: region, Account: account, Suffix: "0123456789ab",
		Parameters: map[string]string{"KeyStore": "ssm", "ConnectorKeyMode": "secret"}}
	first, err := ReadTemplate(data, site)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.CustomResources) != 2 || len(first.Keys) != 0 || len(first.Secrets) != 0 {
		t.Fatalf("KeyStore ssm with ConnectorKeyMode secret: %d custom resources, keys %v, %d secrets; want the two key rings alone",
			len(first.CustomResources), first.Keys, len(first.Secrets))
	}
	bin := filepath.Join(t.TempDir(), "keyring")
	if err := lambdatest.Build("../../functions/keyring", bin); err != nil {
		t.Fatal(err)
	}
	ps := ssmtest.New(t)
	endpoints := map[string]string{"AWS_ENDPOINT_URL_SSM": ps.URL}
	s := &stack{tmpl: first}
	defer s.close()
	if err := s.createCustomResources(context.Background(), &site, map[string]string{invoke.LogicalID("keyring"): bin}, endpoints, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	tmpl, err := ReadTemplate(data, site)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"AWS_ENDPOINT_URL_SSM": ps.URL, "AWS_REGION": region, "AWS_ACCESS_KEY_ID": accessKey, "AWS_SECRET_ACCESS_KEY": secretKey,
		"AWS_SESSION_TOKEN": "", "AWS_PROFILE": "", "AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull} {
		t.Setenv(k, v)
	}
	read := func(f *Function, name string) string {
		t.Helper()
		v := f.Env[name]
		if !strings.HasPrefix(v, "arn:aws:ssm:us-east-1:"+account+":parameter/switchboard/sbtest/") {
			t.Fatalf("%s: %s = %q, want a parameter of the stack", f.Name, name, v)
		}
		cfg := config.FromEnv(os.Getenv)
		if err := secrets.Resolve(context.Background(), &cfg, name, &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	connects := 0
	for _, f := range tmpl.Functions {
		if len(f.HTTP) > 0 {
			if _, err := elicit.ParseKeyring(read(f, config.EnvRequestStateKeys)); err != nil {
				t.Errorf("the gateway's request-state keys: %v", err)
			}
		}
		if _, ok := f.Env[config.EnvConnectorKey]; ok {
			connects++
			if _, err := keyfile.Parse(read(f, config.EnvConnectorKey)); err != nil {
				t.Errorf("%s: the connector key ring: %v", f.Name, err)
			}
		}
	}
	if connects == 0 {
		t.Error("no function reads the connector key ring")
	}
	if got := ps.Calls(); !slices.Contains(got, "PutParameter /switchboard/sbtest/request-state-keys") || !slices.Contains(got, "PutParameter /switchboard/sbtest/connector-keys") {
		t.Errorf("SSM calls %v, want both rings put by the keyring function", got)
	}
}

package lambdatest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestFunctionStartsColdThenStaysWarm(t *testing.T) {
	f := NewFunction(buildEcho(t), nil, &FunctionOptions{ARN: "arn:aws:lambda:us-east-1:123456789012:function:echo"})
	defer f.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var got []bool
	for range 2 {
		res, cold, err := f.Invoke(ctx, []byte(`{"n":1}`))
		if err != nil || res.Error != nil {
			t.Fatalf("Invoke: %v, %v", err, res.Error)
		}
		got = append(got, cold)
	}
	f.Recycle()
	_, cold, err := f.Invoke(ctx, []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, cold)
	if diff := cmp.Diff([]bool{true, false, true}, got); diff != "" {
		t.Errorf("cold starts mismatch (-want +got):\n%s", diff)
	}
}

func TestFunctionRunsConcurrentInvocationsInSeparateInstances(t *testing.T) {
	f := NewFunction(buildEcho(t), nil, &FunctionOptions{Concurrency: 2})
	defer f.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, _, err := f.Invoke(ctx, []byte(`{}`)); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	f.mu.Lock()
	n := len(f.all)
	f.mu.Unlock()
	if n < 1 || n > 2 {
		t.Errorf("%d instances, want 1 or 2 (the concurrency)", n)
	}
}

func TestFunctionPrewarmReportsABootstrapThatExitsAtInit(t *testing.T) {
	f := NewFunction(buildEcho(t), []string{"ECHO_EXIT_AT_INIT=1"}, nil)
	defer f.Close()
	if err := f.Prewarm(5 * time.Second); err == nil || !strings.Contains(err.Error(), "told to exit at init") {
		t.Errorf("Prewarm: %v, want the process's output", err)
	}
}

func TestInvokeAPIAnswersAsLambdaDoes(t *testing.T) {
	f := NewFunction(buildEcho(t), nil, nil)
	defer f.Close()
	srv := httptest.NewServer(InvokeAPI(map[string]*Function{"stack-echo": f}, nil))
	defer srv.Close()
	tests := []struct {
		name, function, payload string
		wantStatus              int
		wantHeader, wantValue   string
		wantBody                string
	}{
		{"a payload is answered with 200", "stack-echo", `{"fail":""}`, 200, "X-Amz-Function-Error", "", `"event":{"fail":""}`},
		{"a function ARN names the function", "arn:aws:lambda:us-east-1:123456789012:function:stack-echo", `{}`, 200, "X-Amz-Function-Error", "", `"event":{}`},
		{"a function error is 200 with X-Amz-Function-Error", "stack-echo", `{"fail":"no"}`, 200, "X-Amz-Function-Error", "Unhandled", `"errorMessage":"no"`},
		{"an unknown function is a 404 API error", "stack-nope", `{}`, 404, "X-Amzn-ErrorType", "ResourceNotFoundException", `Function not found: stack-nope`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := http.Post(srv.URL+"/2015-03-31/functions/"+tc.function+"/invocations", "application/json", strings.NewReader(tc.payload))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.wantStatus || resp.Header.Get(tc.wantHeader) != tc.wantValue || !strings.Contains(string(body), tc.wantBody) {
				t.Errorf("status %d, %s %q, body %s; want %d, %q, a body with %s", resp.StatusCode, tc.wantHeader, resp.Header.Get(tc.wantHeader), body, tc.wantStatus, tc.wantValue, tc.wantBody)
			}
			if resp.StatusCode == 200 && !json.Valid(body) {
				t.Errorf("body %s is not JSON", body)
			}
		})
	}
}

package lambdatest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// fakeFunction acts as a function's runtime client would: it takes the next
// event from rt and posts to the path answer returns for it.
func fakeFunction(t *testing.T, rt *Runtime, answer func(id string, event []byte) (path, body string)) {
	t.Helper()
	resp, err := http.Get("http://" + rt.Addr() + pathNext)
	if err != nil {
		t.Errorf("next: %v", err)
		return
	}
	event, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, h := range []string{HeaderRequestID, HeaderDeadlineMS, HeaderFunctionARN} {
		if resp.Header.Get(h) == "" {
			t.Errorf("next answered without %s", h)
		}
	}
	path, body := answer(resp.Header.Get(HeaderRequestID), event)
	post, err := http.Post("http://"+rt.Addr()+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Errorf("post %s: %v", path, err)
		return
	}
	post.Body.Close()
	if post.StatusCode != http.StatusAccepted {
		t.Errorf("post %s: status %d, want 202", path, post.StatusCode)
	}
}

func TestRuntimeDeliversEventsAndCollectsAnswers(t *testing.T) {
	tests := []struct {
		name    string
		answer  func(id string, event []byte) (string, string)
		want    *Result
		wantErr error
	}{
		{"Response", func(id string, event []byte) (string, string) {
			return pathInvoke + id + "/response", `{"echo":` + string(event) + `}`
		}, &Result{Payload: []byte(`{"echo":{"n":1}}`)}, nil},
		{"FunctionError", func(id string, _ []byte) (string, string) {
			return pathInvoke + id + "/error", `{"errorType":"wrapError","errorMessage":"boom"}`
		}, &Result{Error: &FunctionError{Type: "wrapError", Message: "boom"}}, nil},
		{"InitError", func(string, []byte) (string, string) {
			return pathInitError, `{"errorType":"Runtime.ExitError","errorMessage":"no config"}`
		}, nil, ErrInit},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rt := NewRuntime(nil)
			defer rt.Close()
			done := make(chan struct{})
			go func() {
				defer close(done)
				fakeFunction(t, rt, tc.answer)
			}()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			got, err := rt.Invoke(ctx, []byte(`{"n":1}`))
			<-done // the function has its 202 before the runtime closes
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if got != nil {
				if got.Received.IsZero() || got.Answered.Before(got.Received) {
					t.Errorf("Received %v, Answered %v: want the answer after the delivery", got.Received, got.Answered)
				}
				got.RequestID, got.Received, got.Answered = "", time.Time{}, time.Time{}
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreUnexported(Result{}), cmpopts.IgnoreFields(Result{}, "ContentType", "Chunks")); diff != "" {
				t.Errorf("result mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRuntimeRefusesAnswersToUnknownInvocations(t *testing.T) {
	rt := NewRuntime(nil)
	defer rt.Close()
	resp, err := http.Post("http://"+rt.Addr()+pathInvoke+"nope/response", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("status %d, want 400", resp.StatusCode)
	}
}

func TestInvokeGivesUpWhenTheRuntimeCloses(t *testing.T) {
	rt := NewRuntime(nil)
	errc := make(chan error, 1)
	go func() {
		_, err := rt.Invoke(context.Background(), []byte(`{}`))
		errc <- err
	}()
	time.Sleep(10 * time.Millisecond)
	rt.Close()
	select {
	case err := <-errc:
		if err == nil {
			t.Error("Invoke returned no error after Close")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Invoke still waiting 5s after Close")
	}
}

// buildEcho builds testdata/echo for this machine.
func buildEcho(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "bootstrap")
	if err := Build("./testdata/echo", bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

func TestStartRunsABootstrapThroughItsInvocations(t *testing.T) {
	bin := buildEcho(t)
	const arn = "arn:aws:lambda:eu-west-1:123456789012:function:echo"
	rt := NewRuntime(&Options{FunctionARN: arn})
	defer rt.Close()
	p, err := Start(rt, bin, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	res, err := p.Invoke(ctx, []byte(`{"n":1}`))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(res.Payload, &got); err != nil || res.Error != nil {
		t.Fatalf("answer %s, error %v", res.Payload, res.Error)
	}
	want := map[string]any{"event": map[string]any{"n": 1.0}, "request_id": res.RequestID, "arn": arn, "has_deadline": true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("answer mismatch (-want +got):\n%s", diff)
	}

	res, err = p.Invoke(ctx, []byte(`{"fail":"told to fail"}`))
	if err != nil {
		t.Fatal(err)
	}
	if res.Error == nil || res.Error.Message != "told to fail" {
		t.Errorf("error = %v, want the function's error %q", res.Error, "told to fail")
	}
	if err := p.Stop(); err != nil {
		t.Errorf("Stop: %v", err)
	}
}

func TestInvokeReportsABootstrapThatExitsAtInit(t *testing.T) {
	bin := buildEcho(t)
	rt := NewRuntime(nil)
	defer rt.Close()
	p, err := Start(rt, bin, []string{"ECHO_EXIT_AT_INIT=1"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = p.Invoke(ctx, []byte(`{}`))
	if err == nil || !strings.Contains(err.Error(), "told to exit at init") {
		t.Errorf("err = %v, want one quoting the process's output", err)
	}
}

// TestARuntimeTakesAStreamedAnswerPieceByPiece: the function streams "a",
// then waits for a file that the test creates only when "a" has reached it,
// before it streams "b". A runtime that read the answer whole would never
// hand "a" over in time, and the function would stream "timeout".
func TestARuntimeTakesAStreamedAnswerPieceByPiece(t *testing.T) {
	bin := buildEcho(t)
	rt := NewRuntime(nil)
	defer rt.Close()
	p, err := Start(rt, bin, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	release := filepath.Join(t.TempDir(), "release")
	event, _ := json.Marshal(map[string]any{"stream": []string{"a", "b"}, "release": release})
	var live []string
	res, err := p.InvokeStreaming(ctx, event, func(c Chunk) {
		live = append(live, string(c.Data))
		if string(c.Data) == "a" {
			os.WriteFile(release, nil, 0o600)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Error != nil || string(res.Payload) != "ab" || !res.Streamed || !cmp.Equal(live, []string{"a", "b"}) {
		t.Fatalf("answer %q (chunks handed over %q), streamed %v, error %v; want a then b, streamed", res.Payload, live, res.Streamed, res.Error)
	}
	if len(res.Chunks) != 2 || res.Chunks[1].At.Before(res.Chunks[0].At) || res.Chunks[0].At.Before(res.Received) || res.Answered.Before(res.Chunks[1].At) {
		t.Errorf("chunks %+v received %v answered %v: want two, in order of arrival, within the invocation", res.Chunks, res.Received, res.Answered)
	}

	event, _ = json.Marshal(map[string]any{"stream": []string{"a", "b"}, "fail_midway": "disk on fire"})
	res, err = p.Invoke(ctx, event)
	if err != nil {
		t.Fatal(err)
	}
	if res.Error == nil || res.Error.Message != "disk on fire" || res.Error.Type == "" || res.Payload != nil {
		t.Errorf("a stream that failed midway answered %q, error %+v; want the error of its trailers", res.Payload, res.Error)
	}
}

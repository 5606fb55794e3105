package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/cfn"

	"github.com/switchboard-dev/switchboard/shared/lambdatest"
)

// customTimeout bounds the creation of one custom resource: its function's
// start, its SSM calls and its answer.
const customTimeout = 30 * time.Second

// createCustomResources creates the template's custom resources as
// CloudFormation does: each one's function (its ServiceToken, run with the
// template's environment) is invoked with a Create request whose
// ResponseURL is a local stand-in of the pre-signed S3 URL, and the
// attributes of its answer go to site.Custom, for the second reading of the
// template that gives the other functions their values.
func (s *stack) createCustomResources(ctx context.Context, site *Site, bins map[string]string, endpoints map[string]string, logs string) error {
	answers := &cfnAnswers{got: map[string]chan cfn.Response{}}
	responseURL, err := s.serve(answers, "127.0.0.1:0")
	if err != nil {
		return err
	}
	site.Custom = map[string]map[string]string{}
	for i, c := range s.tmpl.CustomResources {
		f := s.first(func(f *Function) bool { return f.ARN == c.ServiceToken })
		if f.LogicalID == "" {
			return fmt.Errorf("custom resource %s: its ServiceToken %q is no function of the template", c.LogicalID, c.ServiceToken)
		}
		log, err := os.OpenFile(filepath.Join(logs, f.Name+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		fn := lambdatest.NewFunction(bins[f.LogicalID], lambdaEnv(f, endpoints), &lambdatest.FunctionOptions{ARN: f.ARN, Timeout: time.Duration(f.Timeout) * time.Second, Log: log})
		id := "stack-" + strconv.Itoa(i+1)
		event := cfn.Event{RequestType: cfn.RequestCreate, RequestID: id, ResponseURL: responseURL + "/cloudformation-response/" + id,
			ResourceType: c.Type, LogicalResourceID: c.LogicalID, StackID: site.StackID(), ResourceProperties: c.Properties}
		resp, err := answers.invoke(ctx, fn, event)
		fn.Close()
		log.Close()
		if err != nil {
			return fmt.Errorf("custom resource %s: %w", c.LogicalID, err)
		}
		if resp.Status != cfn.StatusSuccess {
			return fmt.Errorf("custom resource %s: its function answered %s: %s", c.LogicalID, resp.Status, resp.Reason)
		}
		site.Custom[c.LogicalID] = map[string]string{}
		for k, v := range resp.Data {
			site.Custom[c.LogicalID][k] = fmt.Sprint(v)
		}
	}
	return nil
}

// cfnAnswers is the receiving end of the custom resources' ResponseURLs:
// an answer is a PUT of the response JSON, without a content type (the
// URL's signature covers none).
type cfnAnswers struct {
	mu  sync.Mutex
	got map[string]chan cfn.Response // by request id
}

func (a *cfnAnswers) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var resp cfn.Response
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if r.Method != http.MethodPut || r.Header.Get("Content-Type") != "" || err != nil || json.Unmarshal(body, &resp) != nil {
		http.Error(w, "want a PUT of a custom resource's response JSON, without Content-Type", http.StatusBadRequest)
		return
	}
	a.mu.Lock()
	ch, ok := a.got[resp.RequestID]
	a.mu.Unlock()
	if !ok || "/cloudformation-response/"+resp.RequestID != r.URL.Path {
		http.Error(w, "no request "+resp.RequestID+" is waiting", http.StatusForbidden)
		return
	}
	select {
	case ch <- resp:
	default: // answered twice: the first counts
	}
}

// invoke sends fn the event, as CloudFormation invokes a custom resource's
// function, and waits for the answer on the event's ResponseURL.
func (a *cfnAnswers) invoke(ctx context.Context, fn *lambdatest.Function, e cfn.Event) (cfn.Response, error) {
	ch := make(chan cfn.Response, 1)
	a.mu.Lock()
	a.got[e.RequestID] = ch
	a.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, customTimeout)
	defer cancel()
	payload, err := json.Marshal(e)
	if err != nil {
		return cfn.Response{}, err
	}
	if _, _, err := fn.Invoke(ctx, payload); err != nil {
		return cfn.Response{}, fmt.Errorf("invoking its function: %w", err)
	}
	select {
	case resp := <-ch:
		return resp, nil
	case <-ctx.Done():
		return cfn.Response{}, fmt.Errorf("no answer reached the ResponseURL in %v", customTimeout)
	}
}

// Package lambdaapi invokes Switchboard's functions through the Lambda Invoke
// API: the [invoke.Invoker] of the deployed gateway and of a function that
// invokes others (the retriever its search workers).
//
//	inv := lambdaapi.New(awsCfg, "switchboard-")
//	resp, err := inv.Invoke(ctx, "memory/add_message", req) // calls switchboard-memory-add-message
//
// It makes the one call it needs, POST /2015-03-31/functions/{name}/invocations,
// itself: signed with the SDK's Signature Version 4 signer, retried by the
// SDK's standard retryer, its errors the SDK's API errors, carrying the
// caller's X-Ray trace ([callcontext.TraceHeader]). The SDK's Lambda
// client would cost every cold start of the gateway most of a millisecond to
// initialise (its generated schemas and endpoint rules), for one operation of
// hundreds (issue 11). Package invoke, which every function links for its
// envelope, links none of this.
package lambdaapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/switchboard-dev/switchboard/shared/awsjson"
	"github.com/switchboard-dev/switchboard/shared/callcontext"
	"github.com/switchboard-dev/switchboard/shared/invoke"
)

// MaxResponseBytes bounds what a function may answer: Lambda's limit for a
// synchronous invocation's response.
const MaxResponseBytes = invoke.MaxResponseBytes

// Invoker invokes functions through the Lambda Invoke API. Function paths
// map to function names by a fixed rule, see [invoke.FunctionName], so the
// gateway needs only the stack's prefix, not one setting per function. It is
// safe for concurrent use.
type Invoker struct {
	cfg      aws.Config
	prefix   string
	endpoint string
	client   aws.HTTPClient
	signer   *v4.Signer
	retryer  aws.Retryer
}

var _ invoke.StreamInvoker = (*Invoker)(nil)

// New returns an Invoker that calls function prefix+invoke.FunctionName(path)
// with cfg's region, credentials, HTTP client and retry settings, at the
// Lambda endpoint cfg names (the AWS_ENDPOINT_URL_LAMBDA or AWS_ENDPOINT_URL
// of its configuration sources, or its BaseEndpoint) or else the region's
// standard one. It does no I/O.
func New(cfg aws.Config, prefix string) *Invoker {
	l := &Invoker{cfg: cfg, prefix: prefix, endpoint: awsjson.ServiceEndpoint(cfg, "Lambda", "lambda"), client: cfg.HTTPClient, signer: v4.NewSigner()}
	if l.client == nil {
		l.client = awshttp.NewBuildableClient()
	}
	if cfg.Retryer != nil {
		l.retryer = cfg.Retryer()
	} else {
		l.retryer = retry.NewStandard(func(o *retry.StandardOptions) {
			if cfg.RetryMaxAttempts > 0 {
				o.MaxAttempts = cfg.RetryMaxAttempts
			}
		})
	}
	return l
}

// Invoke implements [invoke.Invoker]. A call the API refuses (throttled, a
// function that does not exist, ...) is an error wrapping a
// [smithy.APIError]; a function that fails outright is an
// [*invoke.FunctionError].
func (l *Invoker) Invoke(ctx context.Context, function string, req *invoke.Request) (*invoke.Response, error) {
	out, err := l.InvokeRaw(ctx, function, req)
	if err != nil {
		return nil, err
	}
	return invoke.DecodeResponse(function, out)
}

// InvokeRaw implements [invoke.RawInvoker]: it fails as Invoke does, and
// otherwise returns the function's answer as the function wrote it, for the
// gateway's tools/call fast path to read in one pass.
func (l *Invoker) InvokeRaw(ctx context.Context, function string, req *invoke.Request) ([]byte, error) {
	payload, err := invoke.Encode(req)
	if err != nil {
		return nil, err
	}
	name := l.prefix + invoke.FunctionName(function)
	out, functionError, err := l.call(ctx, name, payload, callcontext.TraceHeader(ctx, req.TraceID))
	if err != nil {
		return nil, fmt.Errorf("invoke: lambda %s: %w", name, err)
	}
	if functionError != "" {
		var e struct {
			Message string `json:"errorMessage"`
			Type    string `json:"errorType"`
		}
		_ = json.Unmarshal(out, &e) // a crash may leave no JSON; keep what we have
		if e.Type == "" {
			e.Type = functionError
		}
		if e.Message == "" {
			e.Message = string(out)
		}
		return nil, &invoke.FunctionError{Function: function, Type: e.Type, Message: e.Message}
	}
	return out, nil
}

// call invokes the function name with payload and the X-Ray trace header
// trace (none if ""), retrying as [Invoker.retrying] does, and returns its
// answer and its X-Amz-Function-Error, if any.
func (l *Invoker) call(ctx context.Context, name string, payload []byte, trace string) (out []byte, functionError string, err error) {
	err = l.retrying(ctx, func() error {
		resp, err := l.send(ctx, "/2015-03-31/functions/"+url.PathEscape(name)+"/invocations", payload, trace)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
		if err != nil {
			return err
		}
		if len(body) > MaxResponseBytes {
			return fmt.Errorf("the answer is larger than Lambda's %d bytes", MaxResponseBytes)
		}
		out, functionError = body, resp.Header.Get("X-Amz-Function-Error")
		return nil
	})
	return out, functionError, err
}

// retrying runs attempt until it succeeds or fails for good, as the
// retryer allows (its attempts, delays and retry quota).
func (l *Invoker) retrying(ctx context.Context, attempt func() error) error {
	release := func(error) error { return nil }
	for n := 1; ; n++ {
		err := attempt()
		release(err) // gives back the quota the retry took, if it succeeded
		if err == nil || n >= l.retryer.MaxAttempts() || !l.retryer.IsErrorRetryable(err) {
			return err
		}
		delay, derr := l.retryer.RetryDelay(n, err)
		if derr != nil {
			return err
		}
		if release, derr = l.retryer.GetRetryToken(ctx, err); derr != nil {
			return err // the retry quota is spent
		}
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return err
		}
	}
}

// send makes one signed request to the Lambda API at path and returns its
// answer if its status is 2xx, for the caller to read and close; any other
// is an API error. Its X-Amzn-Trace-Id, the caller's X-Ray trace, makes the
// invoked function's segment part of that trace (with active tracing,
// Lambda continues the trace the header names).
func (l *Invoker) send(ctx context.Context, path string, payload []byte, trace string) (*http.Response, error) {
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, l.endpoint+path, bytes.NewReader(payload))
	if err != nil {
		return nil, err
	}
	r.Header.Set("Content-Type", "application/octet-stream")
	if trace != "" {
		r.Header.Set("X-Amzn-Trace-Id", trace)
	}
	creds, err := l.cfg.Credentials.Retrieve(ctx)
	if err != nil {
		return nil, fmt.Errorf("retrieving credentials: %w", err)
	}
	sum := sha256.Sum256(payload)
	if err := l.signer.SignHTTP(ctx, creds, r, hex.EncodeToString(sum[:]), "lambda", l.cfg.Region, time.Now()); err != nil {
		return nil, fmt.Errorf("signing: %w", err)
	}
	resp, err := l.client.Do(r)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if err != nil {
			return nil, err
		}
		return nil, &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: resp}, Err: apiError(resp, body)}
	}
	return resp, nil
}

// apiError decodes the Lambda API's error answer: its code in the
// X-Amzn-ErrorType header (before any ":"), else the body's "Type" or
// "__type"; its message in the body's "message" or "Message".
func apiError(resp *http.Response, body []byte) *smithy.GenericAPIError {
	var e struct {
		Type    string `json:"__type"`
		Kind    string `json:"Type"`
		Message string `json:"message"`
		Upper   string `json:"Message"`
	}
	_ = json.Unmarshal(body, &e) // a proxy's error may not be JSON; the status remains
	code, _, _ := strings.Cut(resp.Header.Get("X-Amzn-ErrorType"), ":")
	if code == "" {
		code = e.Type
	}
	if code == "" {
		code = e.Kind
	}
	if code == "" {
		code = http.StatusText(resp.StatusCode)
	}
	msg := e.Message
	if msg == "" {
		msg = e.Upper
	}
	fault := smithy.FaultServer
	if resp.StatusCode/100 == 4 {
		fault = smithy.FaultClient
	}
	return &smithy.GenericAPIError{Code: code, Message: msg, Fault: fault}
}

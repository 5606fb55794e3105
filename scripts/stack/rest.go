package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/apigw"
	"github.com/switchboard-dev/switchboard/shared/lambdatest"
)

// restStreaming is an API Gateway REST API whose Lambda proxy integrations
// stream (ResponseTransferMode STREAM, response-streaming-invocations): its
// routes are served under the stage, as on the execute-api URL
// (https://<api>.execute-api.<region>.amazonaws.com/<stage>/mcp); the event
// (payload format 1.0) carries the path without the stage, as API Gateway's
// does, and the stage in its request context. The function's answer is
// relayed as it streams: its prelude as the status and headers, then each
// piece of the body as it arrives.
type restStreaming struct{ stage string }

func (d restStreaming) mount(e HTTPEvent) string {
	return "/" + d.stage + strings.TrimSuffix(e.Path, "/")
}

func (d restStreaming) String() string {
	return fmt.Sprintf("API Gateway REST API stand-in, stage %s, streaming Lambda proxy integration", d.stage)
}

// notFound answers as a REST API answers a request for a resource or
// method it does not have: 403 Missing Authentication Token.
// https://repost.aws/knowledge-center/api-gateway-authentication-token-errors
func (restStreaming) notFound(w http.ResponseWriter) {
	apiMessage(w, http.StatusForbidden, "Missing Authentication Token")
}

func (d restStreaming) serve(w http.ResponseWriter, r *http.Request, e HTTPEvent, invoke invokeFunc) {
	var params map[string]string
	for _, name := range pathParams(e.Path) {
		if params == nil {
			params = map[string]string{}
		}
		params[strings.TrimSuffix(name, "+")] = r.PathValue(pathParamKey(name))
	}
	in := r.Clone(r.Context())
	in.URL.Path, in.URL.RawPath = cmp.Or(strings.TrimPrefix(r.URL.Path, "/"+d.stage), "/"), ""
	in.Body = http.MaxBytesReader(w, r.Body, maxRequestBytes)
	ev, err := apigw.RESTEvent(in, d.stage)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			apiMessage(w, http.StatusRequestEntityTooLarge, "Request Entity Too Large")
			return
		}
		apiMessage(w, http.StatusBadRequest, "Bad Request")
		return
	}
	now := time.Now()
	ev.Resource, ev.RequestContext.ResourcePath, ev.PathParameters = e.Path, e.Path, params
	ev.RequestContext.AccountID, ev.RequestContext.APIID = account, "local"
	ev.RequestContext.RequestID, ev.RequestContext.RequestTimeEpoch = fmt.Sprintf("%x", now.UnixNano()), now.UnixMilli()
	ev.RequestContext.RequestTime = now.UTC().Format("02/Jan/2006:15:04:05 -0700")
	payload, err := json.Marshal(ev)
	if err != nil {
		apiMessage(w, http.StatusInternalServerError, "Internal server error")
		return
	}
	// As on AWS, a client that goes away does not end the invocation: it runs
	// to its end or its timeout, and the rest of its stream is dropped.
	ctx := context.WithoutCancel(r.Context())
	wrote, err := apigw.RelayStream(w, func(out io.Writer) error {
		res, err := invoke(ctx, payload, func(c lambdatest.Chunk) { out.Write(c.Data) })
		if err == nil && res.Error != nil {
			err = res.Error
		}
		return err
	})
	switch {
	case err == nil:
	case !wrote: // a function error, or an answer without a prelude: API Gateway's 502
		slog.Error("front door: invoking the gateway", "path", r.URL.Path, "error", err)
		apiMessage(w, http.StatusBadGateway, "Internal server error")
	default: // the stream broke off midway: so does the client's answer
		slog.Error("front door: the gateway's stream broke off", "path", r.URL.Path, "error", err)
		panic(http.ErrAbortHandler)
	}
}

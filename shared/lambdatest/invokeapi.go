package lambdatest

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"

	"github.com/aws/smithy-go/eventstream"
)

// MaxPayloadBytes bounds an invocation's payload, as Lambda's synchronous
// invocations are bounded.
const MaxPayloadBytes = 6 << 20

// InvokeAPI serves the Lambda Invoke API,
// POST /2015-03-31/functions/{name}/invocations, and InvokeWithResponseStream
// (see [streamResponse]) for the functions in fns
// (by function name): the name may also be a function ARN, as the Lambda API
// and Step Functions pass it. It answers as Lambda does: the payload with
// 200; a function error with 200, X-Amz-Function-Error: Unhandled and the
// error as JSON; an API error (an unknown function, a payload too large)
// with its status and X-Amzn-ErrorType. InvocationType Event (an
// asynchronous invocation, as S3 notifications make) answers 202 at once and
// runs the invocation in the background, logging a failure to logger (nil
// means discard). fns must not change while it serves.
func InvokeAPI(fns map[string]*Function, logger *slog.Logger) http.Handler {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /2021-11-15/functions/{name}/response-streaming-invocations", func(w http.ResponseWriter, r *http.Request) {
		if f, payload, ok := readInvocation(w, r, fns); ok {
			streamResponse(w, r, f, payload)
		}
	})
	mux.HandleFunc("POST /2015-03-31/functions/{name}/invocations", func(w http.ResponseWriter, r *http.Request) {
		f, payload, ok := readInvocation(w, r, fns)
		if !ok {
			return
		}
		name := r.PathValue("name")
		if r.Header.Get("X-Amz-Invocation-Type") == "Event" {
			go func() {
				res, _, err := f.Invoke(context.Background(), payload)
				if err == nil && res.Error != nil {
					err = res.Error
				}
				if err != nil {
					logger.Error("asynchronous invocation failed", "function", name, "error", err)
				}
			}()
			w.WriteHeader(http.StatusAccepted)
			return
		}
		res, _, err := f.Invoke(r.Context(), payload)
		if err != nil {
			apiError(w, http.StatusBadGateway, "ServiceException", err.Error())
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Amz-Executed-Version", "$LATEST")
		if res.Error != nil {
			w.Header().Set("X-Amz-Function-Error", "Unhandled")
			b, _ := json.Marshal(res.Error)
			w.Write(b)
			return
		}
		w.Write(res.Payload)
	})
	return mux
}

// readInvocation reads an invocation's function (by name or ARN) and payload,
// answering an API error if it cannot.
func readInvocation(w http.ResponseWriter, r *http.Request, fns map[string]*Function) (*Function, []byte, bool) {
	name := r.PathValue("name")
	if i := strings.LastIndex(name, ":function:"); i >= 0 {
		name = name[i+len(":function:"):]
	}
	f := fns[name]
	if f == nil {
		apiError(w, http.StatusNotFound, "ResourceNotFoundException", "Function not found: "+name)
		return nil, nil, false
	}
	payload, err := io.ReadAll(io.LimitReader(r.Body, MaxPayloadBytes+1))
	if err != nil {
		apiError(w, http.StatusBadRequest, "InvalidRequestContentException", err.Error())
		return nil, nil, false
	}
	if len(payload) > MaxPayloadBytes {
		apiError(w, http.StatusRequestEntityTooLarge, "RequestTooLargeException", "Request must be smaller than 6291456 bytes for the InvokeFunction operation")
		return nil, nil, false
	}
	return f, payload, true
}

// streamResponse answers an InvokeWithResponseStream call of f with
// payload as Lambda does: 200 and an application/vnd.amazon.eventstream
// body (encoded with smithy-go's event stream encoder) of PayloadChunk
// events, each piece of the response as the function's runtime received it,
// flushed at once, then an InvokeComplete event, whose ErrorCode and
// ErrorDetails are the function's error type and message if it failed,
// before or after it began to answer. An invocation that gets no answer at
// all is an API error if nothing was sent yet.
func streamResponse(w http.ResponseWriter, r *http.Request, f *Function, payload []byte) {
	enc := eventstream.NewEncoder()
	flush := http.NewResponseController(w).Flush
	var (
		mu     sync.Mutex
		begun  bool
		closed bool
	)
	begin := func() {
		if !begun {
			begun = true
			w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
			w.Header().Set("X-Amz-Executed-Version", "$LATEST")
			w.WriteHeader(http.StatusOK)
		}
	}
	event := func(typ, contentType string, body []byte) {
		begin()
		msg := eventstream.Message{Payload: body}
		msg.Headers.Set(":event-type", eventstream.StringValue(typ))
		msg.Headers.Set(":content-type", eventstream.StringValue(contentType))
		msg.Headers.Set(":message-type", eventstream.StringValue("event"))
		enc.Encode(w, msg)
		flush()
	}
	res, _, err := f.InvokeStreaming(r.Context(), payload, func(c Chunk) {
		mu.Lock()
		defer mu.Unlock()
		if !closed {
			event("PayloadChunk", "application/octet-stream", c.Data)
		}
	})
	mu.Lock()
	defer mu.Unlock()
	closed = true
	complete := map[string]string{}
	switch {
	case err != nil && !begun:
		apiError(w, http.StatusBadGateway, "ServiceException", err.Error())
		return
	case err != nil:
		complete["ErrorCode"], complete["ErrorDetails"] = "ServiceException", err.Error()
	case res.Error != nil:
		complete["ErrorCode"], complete["ErrorDetails"] = res.Error.Type, res.Error.Message
	}
	b, _ := json.Marshal(complete)
	event("InvokeComplete", "application/json", b)
}

// apiError answers an error of the Lambda API itself.
func apiError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("X-Amzn-ErrorType", typ)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]string{"Type": "User", "message": msg})
	w.Write(b)
}

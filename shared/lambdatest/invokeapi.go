package lambdatest

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
)

// MaxPayloadBytes bounds an invocation's payload, as Lambda's synchronous
// invocations are bounded.
const MaxPayloadBytes = 6 << 20

// InvokeAPI serves the Lambda Invoke API,
// POST /2015-03-31/functions/{name}/invocations, for the functions in fns
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
	mux.HandleFunc("POST /2015-03-31/functions/{name}/invocations", func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("name")
		if i := strings.LastIndex(name, ":function:"); i >= 0 {
			name = name[i+len(":function:"):]
		}
		f := fns[name]
		if f == nil {
			apiError(w, http.StatusNotFound, "ResourceNotFoundException", "Function not found: "+name)
			return
		}
		payload, err := io.ReadAll(io.LimitReader(r.Body, MaxPayloadBytes+1))
		if err != nil {
			apiError(w, http.StatusBadRequest, "InvalidRequestContentException", err.Error())
			return
		}
		if len(payload) > MaxPayloadBytes {
			apiError(w, http.StatusRequestEntityTooLarge, "RequestTooLargeException", "Request must be smaller than 6291456 bytes for the InvokeFunction operation")
			return
		}
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

// apiError answers an error of the Lambda API itself.
func apiError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("X-Amzn-ErrorType", typ)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]string{"Type": "User", "message": msg})
	w.Write(b)
}

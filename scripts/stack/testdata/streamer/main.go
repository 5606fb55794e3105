// Command streamer is a function for scripts/stack's tests of the streaming
// REST API: it answers each request as an event stream, "data: <path>"
// first, then, once the file the X-Release header names exists,
// "data: released" ("data: timeout" if it does not appear within 10 s).
package main

import (
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/switchboard-dev/switchboard/shared/apigw"
)

func main() {
	lambda.Start(apigw.StreamingHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fmt.Fprintf(w, "data: %s\n\n", r.URL.Path)
		w.(http.Flusher).Flush()
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if _, err := os.Stat(r.Header.Get("X-Release")); err == nil {
				fmt.Fprint(w, "data: released\n\n")
				return
			}
		}
		fmt.Fprint(w, "data: timeout\n\n")
	})))
}

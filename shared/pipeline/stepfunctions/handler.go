package stepfunctions

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/switchboard-dev/switchboard/shared/pipeline"
)

// Handler is a stand-in of the Step Functions API for the tests and
// benchmarks that run a pipeline function's bootstrap: it serves
// StartSyncExecution (AWS JSON 1.0: POST /, X-Amz-Target:
// AWSStepFunctions.StartSyncExecution) of any state machine by running
// execute on the execution's input, and answers as an Express state
// machine's synchronous execution does: SUCCEEDED with the output, FAILED
// with the error and cause of a [*pipeline.ExecutionError]. It refuses
// every other operation, and any other error is the service's 500.
//
//	srv := httptest.NewServer(stepfunctions.Handler(local.Execute)) // a *pipeline.Local over the steps
//	// the bootstrap's environment: SWITCHBOARD_PIPELINE_ARN=arn:..., AWS_ENDPOINT_URL_SFN=srv.URL
func Handler(execute func(ctx context.Context, input []byte) ([]byte, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("X-Amz-Target") != "AWSStepFunctions.StartSyncExecution" {
			answer(w, http.StatusBadRequest, map[string]any{"__type": "UnknownOperationException", "message": "this stand-in serves StartSyncExecution only"})
			return
		}
		var req struct {
			StateMachineARN string `json:"stateMachineArn"`
			Input           string `json:"input"`
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err == nil {
			err = json.Unmarshal(body, &req)
		}
		if err != nil {
			answer(w, http.StatusBadRequest, map[string]any{"__type": "SerializationException", "message": err.Error()})
			return
		}
		started := float64(time.Now().UnixMilli()) / 1000
		out, err := execute(r.Context(), []byte(req.Input))
		res := map[string]any{"stateMachineArn": req.StateMachineARN, "executionArn": req.StateMachineARN + ":execution",
			"startDate": started, "stopDate": float64(time.Now().UnixMilli()) / 1000, "status": "SUCCEEDED", "output": string(out)}
		var failed *pipeline.ExecutionError
		switch {
		case errors.As(err, &failed):
			res["status"], res["error"], res["cause"] = failed.Status, failed.Err, failed.Cause
			delete(res, "output")
		case err != nil:
			answer(w, http.StatusInternalServerError, map[string]any{"__type": "InternalServerError", "message": err.Error()})
			return
		}
		answer(w, http.StatusOK, res)
	})
}

func answer(w http.ResponseWriter, status int, body map[string]any) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
}

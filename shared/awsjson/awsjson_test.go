package awsjson

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

func TestAHostPrefixGoesOnlyBeforeTheRegionalEndpoint(t *testing.T) {
	local := aws.String("http://127.0.0.1:8083/")
	tests := []struct {
		name string
		api  API
		cfg  aws.Config
		want string
	}{
		{"the regional endpoint", StepFunctionsSync, aws.Config{Region: "eu-west-1"}, "https://sync-states.eu-west-1.amazonaws.com"},
		{"in China", StepFunctionsSync, aws.Config{Region: "cn-north-1"}, "https://sync-states.cn-north-1.amazonaws.com.cn"},
		{"an endpoint configured in its place", StepFunctionsSync, aws.Config{Region: "eu-west-1", BaseEndpoint: local}, "http://127.0.0.1:8083"},
		{"an API without a prefix", SSM, aws.Config{Region: "eu-west-1"}, "https://ssm.eu-west-1.amazonaws.com"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.api.endpoint(&tc.cfg); got != tc.want {
				t.Errorf("endpoint = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestRetryEndsWithTheContextsErrorIfItEndsWhileWaiting(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	throttled := errors.New("ThrottlingException")
	calls := 0
	err := Retry(ctx, func() (bool, error) {
		calls++
		cancel()
		return true, throttled
	})
	if calls != 1 || !errors.Is(err, context.Canceled) || !errors.Is(err, throttled) {
		t.Errorf("Retry = %v after %d calls; want context.Canceled wrapping the throttling, after one call", err, calls)
	}
}

// An answer whose body breaks off after its status: a success means the
// action was done, so it is not tried again; a failure may be.
func TestABrokenAnswerIsRetriedOnlyIfItsStatusIsAFailure(t *testing.T) {
	for _, status := range []int{http.StatusOK, http.StatusInternalServerError} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Length", "100")
			w.WriteHeader(status)
			w.Write([]byte(`{"status":`)) // and the connection closes, 90 bytes short
		}))
		cfg := aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
			Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", "")}
		retry, err := Call(t.Context(), &cfg, StepFunctionsSync, "StartSyncExecution", map[string]string{}, nil, 1<<20)
		srv.Close()
		if err == nil || retry != (status != http.StatusOK) {
			t.Errorf("status %d, body cut short: Call = %v, %v; want an error, retry %v", status, retry, err, status != http.StatusOK)
		}
	}
}

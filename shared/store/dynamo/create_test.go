package dynamo

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// DynamoDB Local creates a table at once; DynamoDB answers DescribeTable
// with CREATING, or not yet with the table, for a while: CreateTable waits
// for ACTIVE, within its context, and checks the key schema it finds.
func TestCreateTableWaitsForTheTableToBecomeActive(t *testing.T) {
	const (
		ours   = `"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}]`
		theirs = `"KeySchema":[{"AttributeName":"id","KeyType":"HASH"}]`
	)
	tests := []struct {
		name      string
		described []string // DescribeTable's answers, in turn; the last repeats
		timeout   time.Duration
		wantErr   string // "" for none
	}{
		{"a table active at once", []string{`{"Table":{"TableStatus":"ACTIVE",` + ours + `}}`}, time.Minute, ""},
		{"a table creating, then active", []string{`{"Table":{"TableStatus":"CREATING",` + ours + `}}`, `{"Table":{"TableStatus":"CREATING",` + ours + `}}`, `{"Table":{"TableStatus":"ACTIVE",` + ours + `}}`}, time.Minute, ""},
		{"a table not found yet, then active", []string{fault("ResourceNotFoundException"), `{"Table":{"TableStatus":"ACTIVE",` + ours + `}}`}, time.Minute, ""},
		{"a table keyed otherwise", []string{`{"Table":{"TableStatus":"ACTIVE",` + theirs + `}}`}, time.Minute, `table is keyed by ("id", "")`},
		{"a table creating past the deadline", []string{`{"Table":{"TableStatus":"CREATING",` + ours + `}}`}, 250 * time.Millisecond, "context deadline exceeded"},
		{"a refusal to describe it", []string{fault("AccessDeniedException")}, time.Minute, "AccessDeniedException"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			described := 0
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				answer := `{}`
				switch r.Header.Get("X-Amz-Target") {
				case "DynamoDB_20120810.CreateTable":
					answer = fault("ResourceInUseException")
				case "DynamoDB_20120810.DescribeTable":
					answer = tc.described[min(described, len(tc.described)-1)]
					described++
				case "DynamoDB_20120810.DescribeTimeToLive":
					answer = `{"TimeToLiveDescription":{"TimeToLiveStatus":"ENABLED","AttributeName":"expires_at"}}`
				}
				if strings.Contains(answer, "__type") {
					w.WriteHeader(http.StatusBadRequest)
				}
				io.WriteString(w, answer)
			}))
			defer srv.Close()
			ctx, cancel := context.WithTimeout(t.Context(), tc.timeout)
			defer cancel()
			cfg := aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", "")}
			err := CreateTable(ctx, cfg, "tbl")
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("CreateTable = %v after %d DescribeTable calls", err, described)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("CreateTable = %v, want an error saying %q", err, tc.wantErr)
			case tc.wantErr == "" && described != len(tc.described):
				t.Errorf("%d DescribeTable calls, want %d", described, len(tc.described))
			}
			if strings.Contains(tc.wantErr, "deadline") && !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("CreateTable = %v, want context.DeadlineExceeded in the chain", err)
			}
		})
	}
}

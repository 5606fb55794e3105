package dynamo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/switchboard-dev/switchboard/shared/awsjson"
	"github.com/switchboard-dev/switchboard/shared/store"
)

// canceled is DynamoDB's TransactionCanceledException answer with a reason
// of each code, in the order of the writes.
func canceled(codes ...string) string {
	type reason struct{ Code, Message string }
	answer := struct {
		Type                string `json:"__type"`
		Message             string
		CancellationReasons []reason
	}{Type: "com.amazonaws.dynamodb.v20120810#TransactionCanceledException", Message: "Transaction cancelled"}
	for _, c := range codes {
		answer.CancellationReasons = append(answer.CancellationReasons, reason{Code: c})
	}
	b, _ := json.Marshal(answer)
	return string(b)
}

// fault is DynamoDB's answer of the error code with no other field.
func fault(code string) string {
	return fmt.Sprintf(`{"__type":"com.amazonaws.dynamodb.v20120810#%s","message":"refused"}`, code)
}

// fakeDynamoDB is a DynamoDB endpoint that answers every call with status
// and answer, recording each call's target and body, for the errors
// DynamoDB Local does not make (throttling; its own reasons).
type fakeDynamoDB struct {
	status int
	answer string

	mu     sync.Mutex
	calls  []string
	bodies []map[string]any
}

func (f *fakeDynamoDB) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var body map[string]any
	json.Unmarshal(b, &body)
	f.mu.Lock()
	f.calls = append(f.calls, r.Header.Get("X-Amz-Target"))
	f.bodies = append(f.bodies, body)
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.WriteHeader(f.status)
	io.WriteString(w, f.answer)
}

// open returns a Table calling f.
func (f *fakeDynamoDB) open(t *testing.T) *Table {
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return New(aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", "")}, "tbl")
}

func TestDynamoDBsErrorsMapToTheStoresAndNameTheWrite(t *testing.T) {
	put := func(ctx context.Context, tbl *Table) error {
		return tbl.Put(ctx, store.Item{PK: "p", SK: "s"}, store.IfAbsent())
	}
	transact := func(ctx context.Context, tbl *Table) error {
		return tbl.Transact(ctx,
			store.Put(store.Item{PK: "p", SK: "a"}, store.Condition{}),
			store.Check("p", "b", store.Condition{}), // always holds: left out of the call
			store.Put(store.Item{PK: "p", SK: "c"}, store.IfAbsent()))
	}
	tests := []struct {
		name   string
		op     func(context.Context, *Table) error
		status int
		answer string
		want   error
		says   string // in the error's text
		calls  int
	}{
		{"a condition that did not hold", put, 400, fault("ConditionalCheckFailedException"), store.ErrConditionFailed, "put p/s (if absent)", 1},
		{"a write that met a transaction", put, 400, fault("TransactionConflictException"), store.ErrConflict, "TransactionConflictException", 1},
		{"a write to an item a transaction is writing, tried again", put, 400, fault("TransactionInProgressException"), store.ErrConflict, "TransactionInProgressException", 3},
		{"a throttled write, tried again", put, 400, fault("ProvisionedThroughputExceededException"), nil, "ProvisionedThroughputExceededException", 3},
		{"an account over its request limit, tried again", put, 400, fault("RequestLimitExceeded"), nil, "RequestLimitExceeded", 3},
		{"a server error, tried again", put, 500, fault("InternalServerError"), nil, "InternalServerError", 3},
		{"a request DynamoDB refuses", put, 400, fault("ValidationException"), nil, "ValidationException", 1},
		{"a transaction canceled by the condition of its third write", transact, 400, canceled("None", "ConditionalCheckFailed"), store.ErrConditionFailed, "write 2 p/c (if absent)", 1},
		{"a transaction canceled by a condition and a conflict", transact, 400, canceled("TransactionConflict", "ConditionalCheckFailed"), store.ErrConditionFailed, "write 2 p/c", 1},
		{"a transaction canceled by a conflict", transact, 400, canceled("TransactionConflict", "None"), store.ErrConflict, "write 0 p/a", 1},
		{"a transaction canceled by throttling", transact, 400, canceled("ThrottlingError", "None"), nil, "transact: TransactionCanceledException", 1},
		{"a transaction canceled with no reasons", transact, 400, fault("TransactionCanceledException"), nil, "transact: TransactionCanceledException", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeDynamoDB{status: tc.status, answer: tc.answer}
			err := tc.op(t.Context(), f.open(t))
			var e *awsjson.Error
			if !errors.As(err, &e) || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("error %v: want DynamoDB's error in the chain, saying %q", err, tc.says)
			}
			for _, sentinel := range []error{store.ErrConditionFailed, store.ErrConflict} {
				if errors.Is(err, sentinel) != (sentinel == tc.want) {
					t.Errorf("error %v; errors.Is(%v) = %v", err, sentinel, !(sentinel == tc.want))
				}
			}
			if len(f.calls) != tc.calls {
				t.Errorf("%d calls, want %d", len(f.calls), tc.calls)
			}
		})
	}
}

// The SDK's client filled ClientRequestToken; a retry of a transaction
// that did commit must carry the same one, so that DynamoDB answers it
// from its idempotency window instead of applying it twice.
func TestATransactionTriedAgainCarriesTheSameToken(t *testing.T) {
	f := &fakeDynamoDB{status: 500, answer: fault("InternalServerError")}
	tbl := f.open(t)
	tbl.Transact(t.Context(), store.Put(store.Item{PK: "p", SK: "a"}, store.Condition{}))
	tbl.Transact(t.Context(), store.Put(store.Item{PK: "p", SK: "a"}, store.Condition{}))
	var tokens []any
	for _, b := range f.bodies {
		tokens = append(tokens, b["ClientRequestToken"])
	}
	if len(tokens) != 6 || tokens[0] == nil || tokens[0] == "" || tokens[1] != tokens[0] || tokens[2] != tokens[0] || tokens[3] == tokens[0] || tokens[4] != tokens[3] {
		t.Errorf("tokens of two transactions tried three times each: %q; want one per transaction", tokens)
	}
}

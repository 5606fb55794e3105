package dynamo

import (
	"errors"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/switchboard-dev/switchboard/shared/store"
)

func TestMapError(t *testing.T) {
	reasons := func(codes ...string) error {
		e := &types.TransactionCanceledException{Message: aws.String("canceled")}
		for _, c := range codes {
			e.CancellationReasons = append(e.CancellationReasons, types.CancellationReason{Code: aws.String(c)})
		}
		return fmt.Errorf("operation error: %w", e)
	}
	other := errors.New("connection refused")
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"ConditionalCheckFailed", &types.ConditionalCheckFailedException{}, store.ErrConditionFailed},
		{"CanceledByACondition", reasons("None", "ConditionalCheckFailed"), store.ErrConditionFailed},
		{"CanceledByAConditionAndAConflict", reasons("TransactionConflict", "ConditionalCheckFailed"), store.ErrConditionFailed},
		{"CanceledByAConflict", reasons("None", "TransactionConflict"), store.ErrConflict},
		{"TransactionConflict", &types.TransactionConflictException{}, store.ErrConflict},
		{"TransactionInProgress", &types.TransactionInProgressException{}, store.ErrConflict},
		{"CanceledByThrottling", reasons("ThrottlingError"), nil},
		{"Other", other, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := mapError(tc.err)
			if !errors.Is(got, tc.err) {
				t.Errorf("mapError(%v) = %v, which drops the original error", tc.err, got)
			}
			for _, sentinel := range []error{store.ErrConditionFailed, store.ErrConflict} {
				if errors.Is(got, sentinel) != (sentinel == tc.want) {
					t.Errorf("mapError(%v) = %v; errors.Is(%v) = %v", tc.err, got, sentinel, !(sentinel == tc.want))
				}
			}
		})
	}
}

func TestUnmarshalItemRejectsForeignTypes(t *testing.T) {
	for name, av := range map[string]types.AttributeValue{
		"Float":     &types.AttributeValueMemberN{Value: "1.5"},
		"Null":      &types.AttributeValueMemberNULL{Value: true},
		"StringSet": &types.AttributeValueMemberSS{Value: []string{"a"}},
	} {
		t.Run(name, func(t *testing.T) {
			item := itemKey("p", "s")
			item["x"] = av
			if it, err := unmarshalItem(item); err == nil {
				t.Errorf("unmarshalItem = %+v, want an error", it)
			}
		})
	}
}

package lambdatest

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	lambdaapi "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/smithy-go"
	"github.com/google/go-cmp/cmp"
)

// The SDK's own Lambda client reads the InvokeWithResponseStream answers of
// InvokeAPI: each piece of the response as an event as it arrives, then the
// InvokeComplete event with the function's error, if any.
func TestInvokeAPIStreamsAsInvokeWithResponseStreamAnswers(t *testing.T) {
	f := NewFunction(buildEcho(t), nil, nil)
	defer f.Close()
	srv := httptest.NewServer(InvokeAPI(map[string]*Function{"stack-echo": f}, nil))
	defer srv.Close()
	client := lambdaapi.NewFromConfig(aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", "")})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	release := filepath.Join(t.TempDir(), "release")
	for _, tc := range []struct {
		name       string
		event      map[string]any
		wantChunks []string
		wantCode   string
		wantDetail string
	}{
		{"A streamed answer comes piece by piece", map[string]any{"stream": []string{"a", "b"}, "release": release}, []string{"a", "b"}, "", ""},
		{"A stream that fails midway ends with its error", map[string]any{"stream": []string{"a"}, "fail_midway": "boom"}, []string{"a"}, "errorString", "boom"},
		{"A function that fails at once answers its error alone", map[string]any{"fail": "no"}, nil, "errorString", "no"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			payload, _ := json.Marshal(tc.event)
			out, err := client.InvokeWithResponseStream(ctx, &lambdaapi.InvokeWithResponseStreamInput{FunctionName: aws.String("stack-echo"), Payload: payload})
			if err != nil {
				t.Fatal(err)
			}
			stream := out.GetStream()
			defer stream.Close()
			var chunks []string
			var complete *types.InvokeWithResponseStreamCompleteEvent
			for ev := range stream.Events() {
				switch ev := ev.(type) {
				case *types.InvokeWithResponseStreamResponseEventMemberPayloadChunk:
					chunks = append(chunks, string(ev.Value.Payload))
					if string(ev.Value.Payload) == "a" {
						os.WriteFile(release, nil, 0o600) // "b" comes only after "a" has arrived
					}
				case *types.InvokeWithResponseStreamResponseEventMemberInvokeComplete:
					complete = &ev.Value
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantChunks, chunks); diff != "" {
				t.Errorf("chunks mismatch (-want +got):\n%s", diff)
			}
			if complete == nil || aws.ToString(complete.ErrorCode) != tc.wantCode || aws.ToString(complete.ErrorDetails) != tc.wantDetail {
				t.Errorf("InvokeComplete %+v, want error %q %q", complete, tc.wantCode, tc.wantDetail)
			}
		})
	}
	t.Run("An unknown function is an API error", func(t *testing.T) {
		_, err := client.InvokeWithResponseStream(ctx, &lambdaapi.InvokeWithResponseStreamInput{FunctionName: aws.String("stack-nope")})
		var ae smithy.APIError
		if !errors.As(err, &ae) || ae.ErrorCode() != "ResourceNotFoundException" {
			t.Errorf("error %v, want ResourceNotFoundException", err)
		}
	})
}

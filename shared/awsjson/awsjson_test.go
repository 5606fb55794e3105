package awsjson

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
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

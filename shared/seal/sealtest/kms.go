package sealtest

import (
	"os"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awskms "github.com/aws/aws-sdk-go-v2/service/kms"
)

// KMSEnv names the environment variable that holds the endpoint URL of the
// local KMS (github.com/nsmithuk/local-kms) the project's test command
// starts, such as http://127.0.0.1:8000. When it is unset the KMS backend is
// skipped.
const KMSEnv = "SWITCHBOARD_TEST_KMS"

// KMSClient returns a KMS client for the local KMS at the endpoint in
// [KMSEnv], with static credentials and region us-east-1. It skips t, naming
// the command that starts the local KMS, when the variable is unset. It never
// reads the machine's AWS configuration, so a test cannot reach a real AWS
// account.
func KMSClient(t testing.TB) *awskms.Client {
	t.Helper()
	return awskms.NewFromConfig(KMSConfig(t))
}

// KMSConfig is [KMSClient]'s configuration, for the packages that call KMS
// without the SDK's client (shared/seal/kms).
func KMSConfig(t testing.TB) aws.Config {
	t.Helper()
	endpoint := os.Getenv(KMSEnv)
	if endpoint == "" {
		t.Skip("skipped: " + KMSEnv + " is not set; run scripts/test to start a local KMS")
	}
	return aws.Config{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider("switchboard", "test", ""),
	}
}

// NewKMSKey creates a symmetric key in the local KMS of client and returns
// its ARN. The key lives as long as the local KMS.
func NewKMSKey(t testing.TB, client *awskms.Client) string {
	t.Helper()
	out, err := client.CreateKey(t.Context(), &awskms.CreateKeyInput{Description: aws.String("switchboard test " + t.Name())})
	if err != nil {
		t.Fatalf("creating a key in the local KMS at %s: %v", os.Getenv(KMSEnv), err)
	}
	return aws.ToString(out.KeyMetadata.Arn)
}

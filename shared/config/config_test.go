package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/switchboard-dev/switchboard/shared/config"
)

func TestFromEnvReadsEveryVariable(t *testing.T) {
	env := map[string]string{
		config.EnvTable: "switchboard-Table-1", config.EnvBucket: "switchboard-bucket", config.EnvFunctionPrefix: "switchboard-",
		config.EnvAllowedOrigins: " https://a.example.com, ,https://b.example.com", config.EnvAnonymousTenant: "demo",
		config.EnvRequestStateKeys: keyring, "AWS_LAMBDA_FUNCTION_NAME": "switchboard-gateway",
		config.EnvRateLimits: "tenant_rate=5", config.EnvOAuthResource: "https://api.example.com/mcp",
		config.EnvOAuthIssuer: "https://issuer.example.com", config.EnvOAuthAlgorithms: "ES256, RS256",
		config.EnvQuotas: "store_documents=10", config.EnvTenantRoleARN: "arn:aws:iam::123456789012:role/tenant",
		config.EnvTableARN: "arn:aws:dynamodb:eu-west-1:123456789012:table/t", config.EnvBucketARN: "arn:aws:s3:::switchboard-bucket",
	}
	got := config.FromEnv(func(k string) string { return env[k] })
	want := config.Config{Table: "switchboard-Table-1", Bucket: "switchboard-bucket", FunctionPrefix: "switchboard-",
		AllowedOrigins: []string{"https://a.example.com", "https://b.example.com"}, AnonymousTenant: "demo", InLambda: true,
		RequestStateKeys: keyring, RateLimits: "tenant_rate=5",
		OAuth:  config.OAuth{Resource: "https://api.example.com/mcp", Issuer: "https://issuer.example.com", Algorithms: []string{"ES256", "RS256"}},
		Quotas: "store_documents=10", TenantRoleARN: "arn:aws:iam::123456789012:role/tenant",
		TableARN: "arn:aws:dynamodb:eu-west-1:123456789012:table/t", BucketARN: "arn:aws:s3:::switchboard-bucket"}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreUnexported(config.Config{})); diff != "" {
		t.Errorf("FromEnv mismatch (-want +got):\n%s", diff)
	}
	if err := got.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

func TestValidateNamesTheVariableAtFault(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  config.Config
		want string
	}{
		{"NoTable", config.Config{}, config.EnvTable + " is required"},
		{"EmptyFileTable", config.Config{Table: "file:"}, config.EnvTable + " is required"},
		{"EmptyFileBucket", config.Config{Table: "t", Bucket: "file:"}, config.EnvBucket},
		{"BadTenant", config.Config{Table: "t", AnonymousTenant: "Not A Tenant"}, config.EnvAnonymousTenant},
		{"BadOrigin", config.Config{Table: "t", AllowedOrigins: []string{"app.example.com"}}, config.EnvAllowedOrigins},
		{"ShortRequestStateKey", config.Config{Table: "t", RequestStateKeys: `{"k1":"short"}`}, config.EnvRequestStateKeys},
		{"OAuthFacadeNeitherOnNorOff", config.Config{Table: "t", OAuth: config.OAuth{Facade: "yes"}}, config.EnvOAuthFacade},
		{"OAuthIssuerWithoutResource", config.Config{Table: "t", OAuth: config.OAuth{Issuer: "https://issuer.example.com"}}, config.EnvOAuthResource},
		{"OAuthResourceWithoutIssuerOrFacade", config.Config{Table: "t", OAuth: config.OAuth{Resource: "https://api.example.com/mcp"}}, config.EnvOAuthIssuer},
		{"OAuthFacadeWithoutProvider", config.Config{Table: "t", OAuth: config.OAuth{Resource: "https://api.example.com/mcp", Facade: "on", SigningKeys: "{}"}}, config.EnvOAuthProviderIssuer},
		{"OAuthFacadeWithoutSigningKeys", config.Config{Table: "t", OAuth: config.OAuth{Resource: "https://api.example.com/mcp", Facade: "on", ProviderIssuer: "https://idp.example.com", ProviderClientID: "c"}}, config.EnvOAuthSigningKeys},
		{"OAuthBadDefaultTenant", config.Config{Table: "t", OAuth: config.OAuth{Resource: "https://api.example.com/mcp", Issuer: "https://issuer.example.com", DefaultTenant: "Not A Tenant"}}, config.EnvOAuthDefaultTenant},
		{"TenantRoleWithoutTableARN", config.Config{Table: "t", TenantRoleARN: "arn:aws:iam::123456789012:role/r"}, config.EnvTableARN},
		{"TenantRoleNotAnARN", config.Config{Table: "t", TenantRoleARN: "r", TableARN: "arn:aws:dynamodb:eu-west-1:123456789012:table/t"}, config.EnvTenantRoleARN},
		{"TenantRoleWithABucketWithoutItsARN", config.Config{Table: "t", Bucket: "b", TenantRoleARN: "arn:aws:iam::123456789012:role/r",
			TableARN: "arn:aws:dynamodb:eu-west-1:123456789012:table/t"}, config.EnvBucketARN},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate() = %v, want an error naming %s", err, tc.want)
			}
		})
	}
}

// keyring is a request-state key ring as Secrets Manager generates it.
const keyring = `{"k1":"Xq2v8cV7mTzR4nL0pW6sYb3dK9fH1gJ5aE7uC2oQ8iM4tN6rZ0yB3wD5xS7lP1ve"}`

func TestOpenKeyring(t *testing.T) {
	dir := t.TempDir()
	local := config.Local(filepath.Join(dir, "data"))
	if _, err := local.OpenKeyring(); err != nil {
		t.Errorf("a laptop's key file: %v", err)
	}
	if info, err := os.Stat(filepath.Join(dir, "data", "request-state-keys.json")); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("the key file was not created private in the data folder: %v", err)
	}
	if _, err := (config.Config{RequestStateKeys: keyring}).OpenKeyring(); err != nil {
		t.Errorf("a key ring from the environment: %v", err)
	}
	if _, err := (config.Config{}).OpenKeyring(); err == nil || !strings.Contains(err.Error(), config.EnvRequestStateKeys) {
		t.Errorf("no key ring: %v, want an error naming %s", err, config.EnvRequestStateKeys)
	}
}

func TestPipelineArnIsReadAndChecked(t *testing.T) {
	arn := "arn:aws:states:us-east-1:123456789012:stateMachine:switchboard-RagPipeline"
	cfg := config.FromEnv(func(k string) string {
		return map[string]string{config.EnvTable: "t", config.EnvPipelineARN: arn}[k]
	})
	if cfg.PipelineARN != arn {
		t.Errorf("PipelineARN = %q, want %q", cfg.PipelineARN, arn)
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	cfg.PipelineARN = "switchboard-RagPipeline"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), config.EnvPipelineARN) {
		t.Errorf("Validate of a name that is no ARN: %v, want an error naming %s", err, config.EnvPipelineARN)
	}
}

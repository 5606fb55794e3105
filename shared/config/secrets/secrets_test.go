package secrets_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/config/secrets"
	"github.com/switchboard-dev/switchboard/shared/config/secrets/secretstest"
)

// useStandIn points the AWS configuration at sm, with static credentials.
func useStandIn(t *testing.T, sm *secretstest.Server) {
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL_SECRETS_MANAGER": sm.URL, "AWS_REGION": secretstest.Region,
		"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_SESSION_TOKEN": "",
		"AWS_PROFILE": "", "AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull,
	} {
		t.Setenv(k, v)
	}
}

func TestResolve(t *testing.T) {
	key := secretstest.ARN("openai")
	sm := secretstest.New(t, map[string]string{key: " sk-current\n", key + "#v2": "sk-v2"})
	useStandIn(t, sm)
	tests := []struct {
		name, value, want, err string
	}{
		{name: "a value that names no secret is used as it is", value: "sk-local", want: "sk-local"},
		{name: "an empty value stays empty", value: "", want: ""},
		{name: "an ARN reads the secret's current version, trimmed", value: key, want: "sk-current"},
		{name: "an ARN with a version id reads that version", value: key + "#v2", want: "sk-v2"},
		{name: "a missing secret is an error naming the variable", value: secretstest.ARN("gone"), err: "SWITCHBOARD_X: reading secret " + secretstest.ARN("gone")},
		{name: "a malformed ARN is an error naming the variable", value: "arn:aws:secretsmanager:us-east-1:1:secret:x", err: "SWITCHBOARD_X: \"arn:aws:secretsmanager:us-east-1:1:secret:x\" is not"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config.FromEnv(os.Getenv)
			v := tt.value
			err := secrets.Resolve(context.Background(), &cfg, "SWITCHBOARD_X", &v)
			if tt.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.err) {
					t.Fatalf("Resolve(%q) = %v; want an error starting %q", tt.value, err, tt.err)
				}
				if strings.Contains(err.Error(), "sk-") {
					t.Fatalf("the error shows a secret: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, v); diff != "" {
				t.Fatalf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
	if diff := cmp.Diff([]string{key, key + "#v2", secretstest.ARN("gone")}, sm.Reads()); diff != "" {
		t.Fatalf("reads mismatch (-want +got):\n%s", diff)
	}
}

// A throttled read is tried again, up to three times in all.
func TestResolveRetriesThrottling(t *testing.T) {
	key := secretstest.ARN("openai")
	sm := secretstest.New(t, map[string]string{key: "sk-1"})
	useStandIn(t, sm)
	for _, tc := range []struct {
		name      string
		throttled int
		ok        bool
	}{
		{"TwoThrottledAnswersAreRidden", 2, true},
		{"ThreeThrottledAnswersAreAnError", 3, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sm.Throttle(tc.throttled)
			cfg := config.FromEnv(os.Getenv)
			v := key
			err := secrets.Resolve(context.Background(), &cfg, "SWITCHBOARD_X", &v)
			if (err == nil) != tc.ok || (tc.ok && v != "sk-1") || (!tc.ok && !strings.Contains(fmt.Sprint(err), "ThrottlingException")) {
				t.Errorf("Resolve = %q, %v; want ok %v", v, err, tc.ok)
			}
		})
	}
}

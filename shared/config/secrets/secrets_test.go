package secrets_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/awsjson"
	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/config/secrets"
	"github.com/switchboard-dev/switchboard/shared/config/secrets/secretstest"
	"github.com/switchboard-dev/switchboard/shared/config/secrets/ssmtest"
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

func TestResolveReadsAParameter(t *testing.T) {
	ps := ssmtest.New(t)
	useStandIn(t, secretstest.New(t, nil))
	t.Setenv("AWS_ENDPOINT_URL_SSM", ps.URL)
	ps.Put("/switchboard/s/keys", `{"k1":"first"}`)
	ps.Put("/switchboard/s/plain", "x")
	ps.Put("flat", " sk-flat\n")
	if _, err := (&ssmPut{ps}).put("/switchboard/s/keys", `{"k1":"first","k2":"second"}`); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, value, want, err string
	}{
		{name: "a path's ARN reads its latest version, decrypted", value: ssmtest.ARN("/switchboard/s/keys"), want: `{"k1":"first","k2":"second"}`},
		{name: "an ARN with a version number reads that version", value: ssmtest.ARN("/switchboard/s/keys") + "#1", want: `{"k1":"first"}`},
		{name: "a name without a path reads, trimmed", value: ssmtest.ARN("flat"), want: "sk-flat"},
		{name: "a missing parameter is an error naming the variable", value: ssmtest.ARN("/gone"), err: "SWITCHBOARD_X: reading parameter " + ssmtest.ARN("/gone") + ": ParameterNotFound"},
		{name: "a missing version is an error", value: ssmtest.ARN("flat") + "#7", err: "SWITCHBOARD_X: reading parameter " + ssmtest.ARN("flat") + ": ParameterVersionNotFound"},
		{name: "a malformed ARN is an error naming the variable", value: "arn:aws:ssm:us-east-1:1:parameter/x", err: "SWITCHBOARD_X: \"arn:aws:ssm:us-east-1:1:parameter/x\" is not an SSM parameter's ARN"},
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
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if v != tt.want {
				t.Fatalf("Resolve(%q) = %q, want %q", tt.value, v, tt.want)
			}
		})
	}
}

func TestResolveRefusesAParameterThatIsNotASecureString(t *testing.T) {
	ps := ssmtest.New(t)
	useStandIn(t, secretstest.New(t, nil))
	t.Setenv("AWS_ENDPOINT_URL_SSM", ps.URL)
	if _, err := (&ssmPut{ps}).putType("/x/plain", "String", `{"k1":"in the clear"}`); err != nil {
		t.Fatal(err)
	}
	cfg := config.FromEnv(os.Getenv)
	v := ssmtest.ARN("/x/plain")
	if err := secrets.Resolve(context.Background(), &cfg, "SWITCHBOARD_X", &v); err == nil || !strings.Contains(err.Error(), "not a SecureString") {
		t.Fatalf("err = %v, want one saying the parameter is not a SecureString", err)
	}
}

func TestParameterName(t *testing.T) {
	for arn, want := range map[string]string{
		"arn:aws:ssm:us-east-1:123456789012:parameter/a/b": "/a/b",
		"arn:aws:ssm:us-east-1:123456789012:parameter/c":   "c",
	} {
		if got := secrets.ParameterName(arn); got != want {
			t.Errorf("ParameterName(%s) = %s, want %s", arn, got, want)
		}
	}
}

// ssmPut writes a parameter's new version through the stand-in's wire
// format, as SSM's PutParameter with Overwrite.
type ssmPut struct{ ps *ssmtest.Server }

func (s *ssmPut) put(name, value string) (int, error) { return s.putType(name, "SecureString", value) }

func (s *ssmPut) putType(name, typ, value string) (int, error) {
	cfg, err := (&config.Config{}).AWS(context.Background())
	if err != nil {
		return 0, err
	}
	var out struct{ Version int }
	_, err = awsjson.Call(context.Background(), &cfg, awsjson.SSM, "PutParameter",
		map[string]any{"Name": name, "Value": value, "Type": typ, "Overwrite": true}, &out, 4096)
	return out.Version, err
}

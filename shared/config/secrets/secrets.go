// Package secrets resolves the settings that hold a secret (a provider's
// API key, the OAuth facade's signing keys, a key ring): on AWS the variable
// carries only the ARN of a Secrets Manager secret or of an SSM Parameter
// Store SecureString parameter, and the value is read once, when the
// function starts, and kept for the life of the instance; anywhere else the
// variable holds the value itself, used as it is. So the secret never sits
// in the function's environment, where lambda:GetFunctionConfiguration
// would show it. It makes the one call it needs (GetSecretValue, or
// GetParameter with decryption) with package awsjson rather than link
// either service's SDK client.
//
//	if err := secrets.Resolve(ctx, &cfg, config.EnvOpenAIAPIKey, &cfg.Providers.OpenAIAPIKey); err != nil { ... }
package secrets

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/switchboard-dev/switchboard/shared/awsjson"
	"github.com/switchboard-dev/switchboard/shared/config"
)

// arnPattern matches a reference to a secret: its ARN, optionally followed
// by #<version id> to read that version rather than the current one (how
// the template pins a version after a rotation). paramPattern matches one
// to a parameter: its ARN (arn:...:parameter/NAME, the leading slash of a
// hierarchical name left out), optionally followed by #<version number>.
// They are compiled when a value names a secret, not at every cold start of
// the functions linking this package (0.1 ms).
var (
	arnPattern = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:[A-Za-z0-9/_+=.@-]+)(?:#([0-9A-Za-z-]{1,64}))?$`)
	})
	paramPattern = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(arn:aws[a-z-]*:ssm:[a-z0-9-]+:[0-9]{12}:parameter/([A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)*))(?:#([1-9][0-9]{0,9}))?$`)
	})
)

// maxSecretBytes bounds a secret's value (Secrets Manager's own limit; a
// parameter's is 8 KB at most).
const maxSecretBytes = 64 << 10

// IsRef reports whether v names a secret or a parameter rather than holding
// a value.
func IsRef(v string) bool {
	return strings.HasPrefix(v, "arn:") && (strings.Contains(v, ":secretsmanager:") || strings.Contains(v, ":ssm:"))
}

// Resolve replaces *value, the setting of the variable name, with the
// secret or the parameter it names, read with c's AWS configuration (so
// AWS_ENDPOINT_URL_SECRETS_MANAGER and AWS_ENDPOINT_URL_SSM apply), when it
// names one; a value that names none is left alone. Errors name the
// variable and never hold the secret.
func Resolve(ctx context.Context, c *config.Config, name string, value *string) error {
	if !IsRef(*value) {
		return nil
	}
	if strings.Contains(*value, ":ssm:") {
		return resolveParameter(ctx, c, name, value)
	}
	m := arnPattern().FindStringSubmatch(*value)
	if m == nil {
		return fmt.Errorf("%s: %q is not a Secrets Manager secret's ARN (arn:aws:secretsmanager:REGION:ACCOUNT:secret:NAME, optionally #VERSION-ID)", name, *value)
	}
	cfg, err := c.AWS(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	in := map[string]string{"SecretId": m[1]}
	if m[2] != "" {
		in["VersionId"] = m[2]
	}
	var out struct{ SecretString *string }
	err = awsjson.Retry(ctx, func() (bool, error) {
		return awsjson.Call(ctx, &cfg, awsjson.SecretsManager, "GetSecretValue", in, &out, 2*maxSecretBytes+4096)
	})
	if err != nil {
		return fmt.Errorf("%s: reading secret %s: %w", name, m[1], err)
	}
	if out.SecretString == nil {
		return fmt.Errorf("%s: secret %s has no string value", name, m[1])
	}
	return set(name, "secret "+m[1], *out.SecretString, value)
}

// resolveParameter is [Resolve] of a parameter's ARN: GetParameter with
// decryption, by the parameter's name (":<version>" after it for a
// version), which SecureString parameters encrypted with the AWS managed
// key aws/ssm need no KMS grant for.
func resolveParameter(ctx context.Context, c *config.Config, name string, value *string) error {
	m := paramPattern().FindStringSubmatch(*value)
	if m == nil {
		return fmt.Errorf("%s: %q is not an SSM parameter's ARN (arn:aws:ssm:REGION:ACCOUNT:parameter/NAME, optionally #VERSION)", name, *value)
	}
	cfg, err := c.AWS(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	param := ParameterName(m[1])
	if m[3] != "" {
		param += ":" + m[3]
	}
	var out struct {
		Parameter struct{ Type, Value string }
	}
	err = awsjson.Retry(ctx, func() (bool, error) {
		return awsjson.Call(ctx, &cfg, awsjson.SSM, "GetParameter", map[string]any{"Name": param, "WithDecryption": true}, &out, 2*maxSecretBytes+4096)
	})
	if err != nil {
		return fmt.Errorf("%s: reading parameter %s: %w", name, m[1], err)
	}
	if out.Parameter.Type != "SecureString" {
		return fmt.Errorf("%s: parameter %s is a %s, not a SecureString", name, m[1], out.Parameter.Type)
	}
	return set(name, "parameter "+m[1], out.Parameter.Value, value)
}

// ParameterName returns the name of the parameter whose ARN is arn: the
// part after parameter/, with a leading slash when it is a path (the ARN
// of /a/b is ...:parameter/a/b, of c ...:parameter/c).
func ParameterName(arn string) string {
	_, n, _ := strings.Cut(arn, ":parameter/")
	if strings.Contains(n, "/") {
		return "/" + n
	}
	return n
}

// set stores v, the value read from what, in *value, refusing one too large
// or empty.
func set(name, what, v string, value *string) error {
	if len(v) > maxSecretBytes {
		return fmt.Errorf("%s: %s is over %d bytes", name, what, maxSecretBytes)
	}
	v = strings.TrimSpace(v)
	if v == "" {
		return errors.New(name + ": " + what + " is empty")
	}
	*value = v
	return nil
}

// Package secrets resolves the settings that hold a secret (a provider's
// API key, the OAuth facade's signing keys): on AWS the variable carries
// only the ARN of a Secrets Manager secret, and the value is read once, when
// the function starts, and kept for the life of the instance; anywhere else
// the variable holds the value itself, used as it is. So the secret never
// sits in the function's environment, where lambda:GetFunctionConfiguration
// would show it. It is a package of its own so that only the functions that
// need a secret link the Secrets Manager client.
//
//	if err := secrets.Resolve(ctx, &cfg, config.EnvOpenAIAPIKey, &cfg.Providers.OpenAIAPIKey); err != nil { ... }
package secrets

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/switchboard-dev/switchboard/shared/config"
)

// arnPattern matches a reference: a secret's ARN, optionally followed by
// #<version id> to read that version rather than the current one (how the
// template pins a version after a rotation).
var arnPattern = regexp.MustCompile(`^(arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:[A-Za-z0-9/_+=.@-]+)(?:#([0-9A-Za-z-]{1,64}))?$`)

// maxSecretBytes bounds a secret's value (Secrets Manager's own limit).
const maxSecretBytes = 64 << 10

// IsRef reports whether v names a secret rather than holding a value.
func IsRef(v string) bool {
	return strings.HasPrefix(v, "arn:") && strings.Contains(v, ":secretsmanager:")
}

// Resolve replaces *value, the setting of the variable name, with the
// secret it names, read with c's AWS configuration (so
// AWS_ENDPOINT_URL_SECRETS_MANAGER applies), when it names one; a value
// that names none is left alone. Errors name the variable and never hold
// the secret.
func Resolve(ctx context.Context, c *config.Config, name string, value *string) error {
	if !IsRef(*value) {
		return nil
	}
	m := arnPattern.FindStringSubmatch(*value)
	if m == nil {
		return fmt.Errorf("%s: %q is not a Secrets Manager secret's ARN (arn:aws:secretsmanager:REGION:ACCOUNT:secret:NAME, optionally #VERSION-ID)", name, *value)
	}
	cfg, err := c.AWS(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	in := &secretsmanager.GetSecretValueInput{SecretId: aws.String(m[1])}
	if m[2] != "" {
		in.VersionId = aws.String(m[2])
	}
	out, err := secretsmanager.NewFromConfig(cfg).GetSecretValue(ctx, in)
	if err != nil {
		return fmt.Errorf("%s: reading secret %s: %w", name, m[1], err)
	}
	if out.SecretString == nil {
		return fmt.Errorf("%s: secret %s has no string value", name, m[1])
	}
	if len(*out.SecretString) > maxSecretBytes {
		return fmt.Errorf("%s: secret %s is over %d bytes", name, m[1], maxSecretBytes)
	}
	v := strings.TrimSpace(*out.SecretString)
	if v == "" {
		return errors.New(name + ": secret " + m[1] + " is empty")
	}
	*value = v
	return nil
}

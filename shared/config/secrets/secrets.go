// Package secrets resolves the settings that hold a secret (a provider's
// API key, the OAuth facade's signing keys): on AWS the variable carries
// only the ARN of a Secrets Manager secret, and the value is read once, when
// the function starts, and kept for the life of the instance; anywhere else
// the variable holds the value itself, used as it is. So the secret never
// sits in the function's environment, where lambda:GetFunctionConfiguration
// would show it. It makes the one call it needs, GetSecretValue, itself,
// signed with the SDK's Signature Version 4 signer, rather than link the
// SDK's Secrets Manager client, whose initialisation would cost every cold
// start of the gateway most of a millisecond (measured: +0.9 ms at p50 with
// the client; issue 11), as package invoke/lambdaapi does for Lambda.
//
//	if err := secrets.Resolve(ctx, &cfg, config.EnvOpenAIAPIKey, &cfg.Providers.OpenAIAPIKey); err != nil { ... }
package secrets

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/switchboard-dev/switchboard/shared/config"
)

// arnPattern matches a reference: a secret's ARN, optionally followed by
// #<version id> to read that version rather than the current one (how the
// template pins a version after a rotation). It is compiled when a value
// names a secret, not at every cold start of the functions linking this
// package (0.1 ms).
var arnPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:[A-Za-z0-9/_+=.@-]+)(?:#([0-9A-Za-z-]{1,64}))?$`)
})

// maxSecretBytes bounds a secret's value (Secrets Manager's own limit).
const maxSecretBytes = 64 << 10

// attempts is how many times a read is tried when Secrets Manager is
// throttling or failing, or cannot be reached.
const attempts = 3

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
	body, _ := json.Marshal(in)
	var out struct{ SecretString *string }
	var lastErr error
	for attempt := range attempts {
		if attempt > 0 {
			select {
			case <-time.After(time.Duration(attempt) * 100 * time.Millisecond):
			case <-ctx.Done():
				return fmt.Errorf("%s: reading secret %s: %w", name, m[1], lastErr)
			}
		}
		var retry bool
		retry, lastErr = getSecretValue(ctx, &cfg, body, &out)
		if lastErr == nil || !retry {
			break
		}
	}
	if lastErr != nil {
		return fmt.Errorf("%s: reading secret %s: %w", name, m[1], lastErr)
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

// getSecretValue makes one signed GetSecretValue request (Secrets Manager's
// JSON 1.1 protocol) with body, decoding the answer into out; retry reports
// whether a failure may pass (throttling, a server error, no answer).
func getSecretValue(ctx context.Context, cfg *aws.Config, body []byte, out any) (retry bool, err error) {
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, config.ServiceEndpoint(*cfg, "Secrets Manager", "secretsmanager")+"/", bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	r.Header.Set("Content-Type", "application/x-amz-json-1.1")
	r.Header.Set("X-Amz-Target", "secretsmanager.GetSecretValue")
	creds, err := cfg.Credentials.Retrieve(ctx)
	if err != nil {
		return false, fmt.Errorf("retrieving credentials: %w", err)
	}
	sum := sha256.Sum256(body)
	if err := v4.NewSigner().SignHTTP(ctx, creds, r, hex.EncodeToString(sum[:]), "secretsmanager", cfg.Region, time.Now()); err != nil {
		return false, fmt.Errorf("signing: %w", err)
	}
	client := cfg.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(r)
	if err != nil {
		return ctx.Err() == nil, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 2*maxSecretBytes+4096))
	if err != nil {
		return true, err
	}
	if resp.StatusCode/100 != 2 {
		var e struct {
			Type    string `json:"__type"`
			Message string `json:"message"`
		}
		_ = json.Unmarshal(answer, &e) // a proxy's error may not be JSON; the status remains
		code := e.Type[strings.LastIndex(e.Type, "#")+1:]
		if code == "" {
			code = http.StatusText(resp.StatusCode)
		}
		return resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests || strings.Contains(code, "Throttling"),
			fmt.Errorf("%s (%d): %s", code, resp.StatusCode, e.Message)
	}
	if err := json.Unmarshal(answer, out); err != nil {
		return false, errors.New("the answer is not GetSecretValue's JSON")
	}
	return false, nil
}

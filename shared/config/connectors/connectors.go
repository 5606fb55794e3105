// Package connectors opens what the connectors family's functions need to
// reach tenants' upstream MCP servers: the sealer of their credentials (on
// AWS a customer-managed KMS key, or a key ring in a Secrets Manager secret
// or an SSM SecureString parameter, read once at start; a local key file on
// a laptop) and the outbound guard (shared/netguard) with the configured
// allow-list.
//
//	err := connectors.Open(ctx, &cfg, &deps) // sets deps.Sealer, CheckURL, HTTPClient
package connectors

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/config/secrets"
	"github.com/switchboard-dev/switchboard/shared/keyfile"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/netguard"
	"github.com/switchboard-dev/switchboard/shared/seal/kms"
	"github.com/switchboard-dev/switchboard/shared/seal/localkey"
)

// Open sets d's Sealer from c.ConnectorKey, its CheckURL and HTTPClient
// from c's connector host policy, and its ConnectorCacheTTL.
func Open(ctx context.Context, c *config.Config, d *lambdafn.Deps) error {
	hosts, err := netguard.ParseHosts(c.ConnectorAllowedHosts)
	if err != nil {
		return fmt.Errorf("%s: %w", config.EnvConnectorAllowedHosts, err)
	}
	if d.ConnectorCacheTTL, err = ParseDuration(config.EnvConnectorCacheTTL, c.ConnectorCacheTTL, time.Second); err != nil {
		return err
	}
	// Event streams are capped per event: the legacy SSE transport carries
	// a session's every answer on one response, which must outlast the cap.
	guard := &netguard.Policy{AllowHTTP: c.ConnectorHTTP, AllowedHosts: hosts, EventsCapped: true}
	// No client-wide timeout: a session's event stream outlives any one
	// request, and package connector bounds each exchange by its context
	// (10 s to initialise, 30 s a call).
	d.CheckURL, d.HTTPClient = guard.CheckURL, guard.Client(0)
	switch path, isFile := strings.CutPrefix(c.ConnectorKey, config.FilePrefix); {
	case c.ConnectorKey == "":
		return fmt.Errorf("%s is required by the connector functions: a KMS key ARN, the ARN of a Secrets Manager secret or of an SSM SecureString parameter holding a key ring, or %s/path/to/connector-keys.json", config.EnvConnectorKey, config.FilePrefix)
	case secrets.IsRef(c.ConnectorKey):
		// A key ring ({"k1":"..."}) in a secret or a parameter: sealed as a key file's.
		ring := c.ConnectorKey
		if err := secrets.Resolve(ctx, c, config.EnvConnectorKey, &ring); err != nil {
			return err
		}
		keys, err := keyfile.Parse(ring)
		if err != nil {
			return fmt.Errorf("%s: %w", config.EnvConnectorKey, err)
		}
		if d.Sealer, err = localkey.New(keys); err != nil {
			return fmt.Errorf("%s: %w", config.EnvConnectorKey, err)
		}
	case isFile:
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return fmt.Errorf("%s: %w", config.EnvConnectorKey, err)
		}
		if d.Sealer, err = localkey.LoadKeyFile(path); err != nil {
			return fmt.Errorf("%s: %w", config.EnvConnectorKey, err)
		}
	default:
		cfg, err := c.AWS(ctx)
		if err != nil {
			return err
		}
		if d.Sealer, err = kms.New(cfg, c.ConnectorKey); err != nil {
			return fmt.Errorf("%s: %w", config.EnvConnectorKey, err)
		}
	}
	return nil
}

// MaxDuration bounds the connectors' cache TTL and the local sync interval.
const MaxDuration = 24 * time.Hour

// ParseDuration parses raw, the value of variable name, as a Go duration
// from least to [MaxDuration], or 0 if raw is "0" or empty (the caller's
// default).
func ParseDuration(name, raw string, least time.Duration) (time.Duration, error) {
	if raw == "" || raw == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(raw)
	if err != nil || d < least || d > MaxDuration {
		return 0, fmt.Errorf("%s: %q is not a duration from %v to %v, such as 5m", name, raw, least, MaxDuration)
	}
	return d, nil
}

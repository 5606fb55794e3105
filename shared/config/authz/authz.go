// Package authz opens the gateway's OAuth side from its configuration
// (config.OAuth, the SWITCHBOARD_OAUTH_* variables): a validator of an
// external issuer's access tokens, or the authorization-server facade in
// front of an OpenID provider with the validator of its own tokens, and the
// protected resource metadata naming whichever issues them.
//
//	o, err := authz.Open(cfg.OAuth, table, keyring, logger) // nil when OAuth is off
//	gateway.New(gateway.Options{..., OAuth: o})
package authz

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/elicit"
	"github.com/switchboard-dev/switchboard/shared/gateway"
	"github.com/switchboard-dev/switchboard/shared/netguard"
	"github.com/switchboard-dev/switchboard/shared/oauth"
	"github.com/switchboard-dev/switchboard/shared/profile"
	"github.com/switchboard-dev/switchboard/shared/store"
)

// documentTimeout bounds a fetch of a client ID metadata document.
const documentTimeout = 5 * time.Second

// Open returns the gateway's OAuth configured by o, or nil if o.Resource is
// empty (API keys only). table and keyring serve the facade (registered
// clients, spent codes; sealed codes and refresh tokens). Errors name the
// variable at fault.
func Open(o config.OAuth, table store.Table, keyring *elicit.Keyring, logger *slog.Logger) (*gateway.OAuth, error) {
	if o.Resource == "" {
		return nil, nil
	}
	scopes := oauth.DefaultScopes()
	if o.Scopes != "" {
		scopes = nil
		if err := json.Unmarshal([]byte(o.Scopes), &scopes); err != nil || len(scopes) == 0 {
			return nil, fmt.Errorf("%s: want a JSON list of rules, [{\"scope\":\"switchboard:read\",\"families\":[\"*\"]}]: %v", config.EnvOAuthScopes, err)
		}
	}
	// The scopes that enable tool groups (package profile) allow no family
	// themselves; they are listed so that clients may ask for them.
	for _, s := range profile.GroupScopes() {
		if !slices.Contains(scopes.Supported(), s) {
			scopes = append(scopes, oauth.ScopeRule{Scope: s})
		}
	}
	if o.Facade != "on" {
		v, err := oauth.NewValidator(oauth.ValidatorOptions{
			Issuer: o.Issuer, Resource: o.Resource, JWKSURL: o.JWKSURL, Algorithms: o.Algorithms,
			TenantClaim: o.TenantClaim, PrincipalClaim: o.PrincipalClaim, DefaultTenant: o.DefaultTenant, Scopes: scopes,
		})
		if err != nil {
			return nil, fmt.Errorf("%s, %s: %w", config.EnvOAuthIssuer, config.EnvOAuthResource, err)
		}
		return &gateway.OAuth{Validator: v, Metadata: metadata(o.Resource, o.Issuer, v.Scopes())}, nil
	}
	keys, err := signingKeys(o.SigningKeys)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(o.Resource)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("%s: %q is not the MCP endpoint's URL", config.EnvOAuthResource, o.Resource)
	}
	issuer := u.Scheme + "://" + u.Host
	guard := &netguard.Policy{}
	f, err := oauth.NewFacade(oauth.FacadeOptions{
		Issuer: issuer, Resource: o.Resource, Table: table, Keyring: keyring, SigningKeys: keys, Scopes: scopes,
		Provider: oauth.ProviderOptions{
			Issuer: o.ProviderIssuer, ClientID: o.ProviderClientID, ClientSecret: o.ProviderClientSecret,
			TenantClaim: o.TenantClaim, PrincipalClaim: o.PrincipalClaim, DefaultTenant: o.DefaultTenant,
		},
		DocumentClient: guard.Client(documentTimeout), CheckURL: guard.CheckURL, Logger: logger,
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", config.EnvOAuthFacade, err)
	}
	v, err := f.Validator()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", config.EnvOAuthFacade, err)
	}
	return &gateway.OAuth{Validator: v, Metadata: metadata(o.Resource, issuer, v.Scopes()), Facade: f.Handler()}, nil
}

func metadata(resource, issuer string, scopes oauth.ScopeRules) oauth.ResourceMetadata {
	return oauth.ResourceMetadata{Resource: resource, AuthorizationServers: []string{issuer},
		ScopesSupported: scopes.Supported(), ResourceName: "Switchboard"}
}

// signingKeys reads {"id":"<key>"}, each key a P-256 private key in PEM or
// a random seed of at least oauth.MinSeedBytes characters the key is derived
// from (oauth.DeriveSigningKey: the template's secret, which Secrets Manager
// generates); the newest id (the greatest, in sort order) signs.
func signingKeys(spec string) ([]oauth.SigningKey, error) {
	var values map[string]string
	if err := json.Unmarshal([]byte(spec), &values); err != nil || len(values) == 0 {
		return nil, fmt.Errorf("%s: want {\"fk1\":\"<P-256 private key, PEM, or a random seed of at least %d characters>\"}", config.EnvOAuthSigningKeys, oauth.MinSeedBytes)
	}
	ids := make([]string, 0, len(values))
	for id := range values {
		ids = append(ids, id)
	}
	sort.Sort(sort.Reverse(sort.StringSlice(ids)))
	keys := make([]oauth.SigningKey, 0, len(ids))
	for _, id := range ids {
		var (
			k   oauth.SigningKey
			err error
		)
		if v := values[id]; strings.HasPrefix(strings.TrimSpace(v), "-----BEGIN") {
			k, err = oauth.ParseSigningKey(id, []byte(v))
		} else {
			k, err = oauth.DeriveSigningKey(id, []byte(v))
		}
		if err != nil {
			return nil, fmt.Errorf("%s: key %q: %w", config.EnvOAuthSigningKeys, id, err)
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// Package oauth makes Switchboard an OAuth 2.1 protected resource for MCP
// hosts, and gives it an authorization server for hosts whose identity
// provider cannot serve them directly.
//
// The resource side: a [Validator] checks JWT access tokens (RFC 9068)
// against an issuer's keys (discovered, cached, refetched for an unknown key
// at most once a minute): signature under an algorithm allow-list, issuer
// exactly, audience equal to the MCP endpoint (RFC 8707), expiry and
// not-before with a minute's skew; it reads the tenant and principal from
// configured claims and maps the scopes to an [Access] by [ScopeRules].
// [ResourceMetadata] is the RFC 9728 document; [ChallengeFor] and
// [InsufficientScope] the WWW-Authenticate answers.
//
//	v, _ := oauth.NewValidator(oauth.ValidatorOptions{Issuer: iss, Resource: "https://api.example.com/mcp"})
//	grant, err := v.Validate(ctx, bearer) // grant.Caller, grant.Access.Allows("memory", true)
//	if err != nil {
//		ch, status := oauth.ChallengeFor(resource, err)
//		w.Header().Set("WWW-Authenticate", ch.String())
//		w.WriteHeader(status)
//	}
//
// The authorization side: a [Facade] in front of an OpenID Connect provider
// (Cognito, or any other) serves RFC 8414 metadata, client ID metadata
// documents and dynamic client registration (RFC 7591), /authorize with PKCE
// S256, a consent page, the provider's login and back, and /token. It issues
// its own ES256 access tokens for the MCP endpoint, which
// [Facade.Validator] checks without fetching anything.
package oauth

// Package config is the one place that reads Switchboard's environment. It
// opens what every process needs, the table (an embedded file on a laptop,
// DynamoDB inside Lambda, DynamoDB Local in tests); one package below it
// opens each other thing a function may need, so that a binary links only
// the clients it uses and pays for no other's initialisation at cold start:
// config/blobs (a folder or S3), config/providers (the embedder and the
// generator), config/stepfunctions (the pipeline's runner) and
// config/invoker (the stack's functions, through the Lambda API). Every
// ephemeral or offline choice is announced once, on stderr, with a WARNING:
// line.
//
//	cfg := config.FromEnv(os.Getenv)
//	if err := cfg.Validate(); err != nil { ... }  // errors name the variable
//	table, closeFn, err := cfg.OpenTable(ctx, os.Stderr)
//	blobs, err := blobs.Open(ctx, &cfg)           // package config/blobs
package config

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/switchboard-dev/switchboard/shared/elicit"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/dynamo"
	"github.com/switchboard-dev/switchboard/shared/store/embedded"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// The environment variables Switchboard reads. README's configuration table lists them.
const (
	EnvTable           = "SWITCHBOARD_TABLE"
	EnvBucket          = "SWITCHBOARD_BUCKET"
	EnvFunctionPrefix  = "SWITCHBOARD_FUNCTION_PREFIX"
	EnvAllowedOrigins  = "SWITCHBOARD_ALLOWED_ORIGINS"
	EnvAnonymousTenant = "SWITCHBOARD_ANONYMOUS_TENANT"
	// EnvRequestStateKeys is the gateway's key ring for the request states of
	// calls that ask the client for input (package elicit).
	EnvRequestStateKeys = "SWITCHBOARD_REQUEST_STATE_KEYS"
	// EnvRateLimits sets the callers' limits the gateway enforces
	// ([Config.RateLimits]).
	EnvRateLimits = "SWITCHBOARD_RATE_LIMITS"
	// EnvQuotas is the deployment's default storage quotas (package quota's
	// ParseLimits syntax), over quota.DefaultLimits.
	EnvQuotas = "SWITCHBOARD_QUOTAS"
	// EnvTenantRoleARN is the role a tool function assumes, per tenant, for
	// its table and bucket (package tenantcreds); EnvTableARN and
	// EnvBucketARN are the resources its session policies name, and
	// EnvBucketKeyARN the customer-managed KMS key of the bucket's objects,
	// if any, whose use through S3 they grant too.
	EnvTenantRoleARN = "SWITCHBOARD_TENANT_ROLE_ARN"
	EnvTableARN      = "SWITCHBOARD_TABLE_ARN"
	EnvBucketARN     = "SWITCHBOARD_BUCKET_ARN"
	EnvBucketKeyARN  = "SWITCHBOARD_BUCKET_KEY_ARN"
	// EnvConnectorKey seals connector credentials: a KMS key ARN, or
	// file:PATH of a local key file (package config/connectors).
	EnvConnectorKey = "SWITCHBOARD_CONNECTOR_KEY"
	// EnvConnectorAllowedHosts exempts hosts from the connectors' address
	// checks (shared/netguard), such as 127.0.0.1,localhost.
	EnvConnectorAllowedHosts = "SWITCHBOARD_CONNECTOR_ALLOWED_HOSTS"
	// EnvConnectorCacheTTL is how long connectors' cached capabilities stay
	// fresh, a Go duration such as 5m (the default).
	EnvConnectorCacheTTL = "SWITCHBOARD_CONNECTOR_CACHE_TTL"
	// EnvConnectorSyncInterval is how often the local server runs the
	// connectors' scheduled sync, a Go duration (default 5m; 0 turns it off).
	EnvConnectorSyncInterval = "SWITCHBOARD_CONNECTOR_SYNC_INTERVAL"
	// EnvLogLevel is the least level the local server logs: debug, info,
	// warn (the default) or error.
	EnvLogLevel = "SWITCHBOARD_LOG_LEVEL"
)

// The gateway's OAuth settings (package config/authz builds them); README's
// OAuth section describes each.
const (
	EnvOAuthResource             = "SWITCHBOARD_OAUTH_RESOURCE"
	EnvOAuthIssuer               = "SWITCHBOARD_OAUTH_ISSUER"
	EnvOAuthJWKSURL              = "SWITCHBOARD_OAUTH_JWKS_URL"
	EnvOAuthAlgorithms           = "SWITCHBOARD_OAUTH_ALGORITHMS"
	EnvOAuthTenantClaim          = "SWITCHBOARD_OAUTH_TENANT_CLAIM"
	EnvOAuthPrincipalClaim       = "SWITCHBOARD_OAUTH_PRINCIPAL_CLAIM"
	EnvOAuthDefaultTenant        = "SWITCHBOARD_OAUTH_DEFAULT_TENANT"
	EnvOAuthScopes               = "SWITCHBOARD_OAUTH_SCOPES"
	EnvOAuthFacade               = "SWITCHBOARD_OAUTH_FACADE"
	EnvOAuthProviderIssuer       = "SWITCHBOARD_OAUTH_PROVIDER_ISSUER"
	EnvOAuthProviderClientID     = "SWITCHBOARD_OAUTH_PROVIDER_CLIENT_ID"
	EnvOAuthProviderClientSecret = "SWITCHBOARD_OAUTH_PROVIDER_CLIENT_SECRET"
	EnvOAuthSigningKeys          = "SWITCHBOARD_OAUTH_SIGNING_KEYS"
)

// OAuth is the gateway's OAuth configuration: off when Resource is empty.
type OAuth struct {
	// Resource is the MCP endpoint's URL, every token's audience.
	Resource string
	// Issuer, JWKSURL, Algorithms: an external issuer whose JWTs are
	// accepted (when Facade is off).
	Issuer, JWKSURL string
	Algorithms      []string
	// TenantClaim, PrincipalClaim, DefaultTenant: where the caller comes from.
	TenantClaim, PrincipalClaim, DefaultTenant string
	// Scopes are the scope rules as JSON; empty for the defaults.
	Scopes string
	// Facade is "on" to serve the authorization-server facade in front of
	// the provider; "" or "off" not to.
	Facade string
	// ProviderIssuer, ProviderClientID, ProviderClientSecret: the facade's
	// OpenID provider and its client there.
	ProviderIssuer, ProviderClientID, ProviderClientSecret string
	// SigningKeys are the facade's access-token keys, {"id":"<PEM>"}.
	SigningKeys string
}

// OAuthFromEnv reads the OAuth settings through getenv.
func OAuthFromEnv(getenv func(string) string) OAuth {
	o := OAuth{
		Resource: getenv(EnvOAuthResource), Issuer: getenv(EnvOAuthIssuer), JWKSURL: getenv(EnvOAuthJWKSURL),
		TenantClaim: getenv(EnvOAuthTenantClaim), PrincipalClaim: getenv(EnvOAuthPrincipalClaim),
		DefaultTenant: getenv(EnvOAuthDefaultTenant), Scopes: getenv(EnvOAuthScopes),
		Facade:         getenv(EnvOAuthFacade),
		ProviderIssuer: getenv(EnvOAuthProviderIssuer), ProviderClientID: getenv(EnvOAuthProviderClientID),
		ProviderClientSecret: getenv(EnvOAuthProviderClientSecret), SigningKeys: getenv(EnvOAuthSigningKeys),
	}
	for _, a := range strings.Split(getenv(EnvOAuthAlgorithms), ",") {
		if a = strings.TrimSpace(a); a != "" {
			o.Algorithms = append(o.Algorithms, a)
		}
	}
	return o
}

// RateLimitsOff is the [EnvRateLimits] value that turns the limits off.
const RateLimitsOff = "off"

// FilePrefix marks a store setting that names a local path instead of an AWS resource.
const FilePrefix = "file:"

// Config is Switchboard's configuration.
type Config struct {
	// Table is the DynamoDB table name, or file:PATH for an embedded table file.
	Table string
	// Bucket is the S3 bucket name, or file:DIR for a local folder. If empty,
	// functions get no blob store (the memory functions need none).
	Bucket string
	// FunctionPrefix begins the name of every tool function; the gateway on
	// AWS, and a function that invokes others, invokes <FunctionPrefix><function
	// name>.
	FunctionPrefix string
	// AllowedOrigins are the browser origins the gateway accepts.
	AllowedOrigins []string
	// AnonymousTenant, if set, is the tenant of gateway requests that carry no
	// API key; if empty, such requests are refused.
	AnonymousTenant string
	// InLambda reports that the process runs inside AWS Lambda.
	InLambda bool
	// MemoryMB is the function's memory inside Lambda
	// (AWS_LAMBDA_FUNCTION_MEMORY_SIZE); zero elsewhere.
	MemoryMB int
	// Providers chooses the embedder and generator (providers.go).
	Providers Providers
	// PipelineARN is the RAG pipeline state machine's ARN ([EnvPipelineARN]).
	PipelineARN string
	// RequestStateKeys is the gateway's key ring ([EnvRequestStateKeys]): a
	// JSON object of secrets by key id ({"k1":"..."}), the ARN of the Secrets
	// Manager secret holding one (on AWS; read at cold start by package
	// config/secrets, #<version id> after it for a version other than the
	// current one), or file:PATH of a key file, created on first use.
	RequestStateKeys string
	// RateLimits are the limits of every tenant without an override of its
	// own ([EnvRateLimits]): ratelimit.ParseLimits's syntax over
	// ratelimit.DefaultLimits (empty: the defaults), or [RateLimitsOff].
	// The local server's are off unless the variable is set. The gateway
	// holds every call to them, and a function that calls tools for its
	// caller (the chat) those calls (ratelimit.Configured parses them;
	// lambdafn's Deps.Limiter).
	RateLimits string
	// OAuth are the gateway's OAuth settings (the SWITCHBOARD_OAUTH_*
	// variables); off unless OAuth.Resource is set.
	OAuth OAuth
	// Quotas is the specification of every tenant's storage quotas without an
	// override ([EnvQuotas]); lambdafn.Open parses it. If empty, the defaults
	// of package quota hold.
	Quotas string
	// TenantRoleARN, if set, is the role a tool function assumes for each
	// tenant to reach the table and the bucket ([EnvTenantRoleARN]), with
	// TableARN and BucketARN the resources of its session policies, and
	// BucketKeyARN the bucket's customer-managed key ([EnvBucketKeyARN]).
	// Package config/tenantscoped opens the credentials.
	TenantRoleARN, TableARN, BucketARN, BucketKeyARN string
	// ConnectorKey seals connector credentials ([EnvConnectorKey]).
	ConnectorKey string
	// ConnectorAllowedHosts are the hosts connectors may reach whatever they
	// resolve to ([EnvConnectorAllowedHosts]), comma-separated.
	ConnectorAllowedHosts string
	// ConnectorCacheTTL is how long connectors' cached capabilities stay
	// fresh ([EnvConnectorCacheTTL]); package config/connectors parses it.
	ConnectorCacheTTL string
	// ConnectorHTTP allows connectors over plain http: set on a laptop
	// ([Local]) only, never from the environment.
	ConnectorHTTP bool
	// WebSearch are the web search family's settings (websearch.go).
	WebSearch WebSearch

	aws     *aws.Config             // loaded once, by AWS
	storage aws.CredentialsProvider // the table's and bucket's credentials, if not the process's ([Config.ScopeStorage])
	getenv  func(string) string     // FromEnv's; nil means os.Getenv
}

// FromEnv reads a Config through getenv (os.Getenv, or a map's lookup in tests).
func FromEnv(getenv func(string) string) Config {
	c := Config{
		Table:            getenv(EnvTable),
		Bucket:           getenv(EnvBucket),
		FunctionPrefix:   getenv(EnvFunctionPrefix),
		AnonymousTenant:  getenv(EnvAnonymousTenant),
		InLambda:         getenv("AWS_LAMBDA_FUNCTION_NAME") != "",
		MemoryMB:         atoi(getenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE")),
		Providers:        providersFromEnv(getenv),
		PipelineARN:      getenv(EnvPipelineARN),
		RequestStateKeys: getenv(EnvRequestStateKeys),
		RateLimits:       getenv(EnvRateLimits),
		OAuth:            OAuthFromEnv(getenv),
		Quotas:           getenv(EnvQuotas),
		TenantRoleARN:    getenv(EnvTenantRoleARN),
		TableARN:         getenv(EnvTableARN),
		BucketARN:        getenv(EnvBucketARN),
		BucketKeyARN:     getenv(EnvBucketKeyARN),
		ConnectorKey:     getenv(EnvConnectorKey),
		WebSearch:        WebSearchFromEnv(getenv),
		getenv:           getenv,

		ConnectorAllowedHosts: getenv(EnvConnectorAllowedHosts),
		ConnectorCacheTTL:     getenv(EnvConnectorCacheTTL),
	}
	for _, o := range strings.Split(getenv(EnvAllowedOrigins), ",") {
		if o = strings.TrimSpace(o); o != "" {
			c.AllowedOrigins = append(c.AllowedOrigins, o)
		}
	}
	return c
}

// Local returns the configuration of a laptop: everything embedded under dir.
func Local(dir string) Config {
	return Config{
		Table:           FilePrefix + filepath.Join(dir, "switchboard.db"),
		Bucket:          FilePrefix + filepath.Join(dir, "blobs"),
		AnonymousTenant: tenant.Local,

		RequestStateKeys: FilePrefix + filepath.Join(dir, "request-state-keys.json"),
		RateLimits:       RateLimitsOff,
		ConnectorKey:     FilePrefix + filepath.Join(dir, "connector-keys.json"),
		ConnectorHTTP:    true,
		WebSearch:        WebSearch{AllowHTTP: true},
	}
}

// Validate checks c, naming the variable at fault. The providers' models,
// dimensions and URLs are checked by package config/providers
// (providers.Validate), which builds them: only the functions that embed or
// generate link them.
func (c Config) Validate() error {
	var errs []error
	if c.Table == "" || c.Table == FilePrefix {
		errs = append(errs, fmt.Errorf("%s is required: a DynamoDB table name, or %s/path/to/switchboard.db for an embedded file", EnvTable, FilePrefix))
	}
	if c.Bucket == FilePrefix {
		errs = append(errs, fmt.Errorf("%s: %s needs a folder after it", EnvBucket, FilePrefix))
	}
	if c.AnonymousTenant != "" {
		if err := tenant.Validate(c.AnonymousTenant); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", EnvAnonymousTenant, err))
		}
	}
	for _, o := range c.AllowedOrigins {
		if !strings.HasPrefix(o, "https://") && !strings.HasPrefix(o, "http://") {
			errs = append(errs, fmt.Errorf("%s: %q is not an origin like https://app.example.com", EnvAllowedOrigins, o))
		}
	}
	errs = append(errs, c.validatePipeline())
	if c.TenantRoleARN != "" {
		for _, v := range []struct{ name, value, want string }{
			{EnvTenantRoleARN, c.TenantRoleARN, "arn:aws:iam::ACCOUNT:role/NAME"},
			{EnvTableARN, c.TableARN, "arn:aws:dynamodb:REGION:ACCOUNT:table/NAME"},
		} {
			if !strings.HasPrefix(v.value, "arn:") {
				errs = append(errs, fmt.Errorf("%s: %q is not an ARN (%s); it is required with %s", v.name, v.value, v.want, EnvTenantRoleARN))
			}
		}
		if c.Bucket != "" && !strings.HasPrefix(c.BucketARN, "arn:") {
			errs = append(errs, fmt.Errorf("%s: %q is not an ARN (arn:aws:s3:::NAME); it is required with %s and %s", EnvBucketARN, c.BucketARN, EnvTenantRoleARN, EnvBucket))
		}
	}
	// A secret's ARN is read, and then checked, by the gateway (config/secrets).
	if k := c.RequestStateKeys; k != "" && !strings.HasPrefix(k, FilePrefix) && !strings.HasPrefix(k, "arn:") {
		if _, err := elicit.ParseKeyring(k); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", EnvRequestStateKeys, err))
		}
	}
	errs = append(errs, c.OAuth.validate())
	return errors.Join(errs...)
}

// validate checks the OAuth settings' presence and form; package
// config/authz checks the rest (URLs, keys, scope rules) as it builds them.
func (o OAuth) validate() error {
	var errs []error
	if o.Facade != "" && o.Facade != "on" && o.Facade != "off" {
		errs = append(errs, fmt.Errorf("%s: %q is neither on nor off", EnvOAuthFacade, o.Facade))
	}
	if o.Resource == "" {
		if o.Issuer != "" || o.Facade == "on" {
			errs = append(errs, fmt.Errorf("%s is required with OAuth: the MCP endpoint's URL, https://.../mcp", EnvOAuthResource))
		}
		return errors.Join(errs...)
	}
	switch {
	case o.Facade == "on":
		for _, v := range [][2]string{{EnvOAuthProviderIssuer, o.ProviderIssuer}, {EnvOAuthProviderClientID, o.ProviderClientID}, {EnvOAuthSigningKeys, o.SigningKeys}} {
			if v[1] == "" {
				errs = append(errs, fmt.Errorf("%s is required with %s=on", v[0], EnvOAuthFacade))
			}
		}
	case o.Issuer == "":
		errs = append(errs, fmt.Errorf("%s: with %s set, either %s or %s=on is required", EnvOAuthIssuer, EnvOAuthResource, EnvOAuthIssuer, EnvOAuthFacade))
	}
	if o.DefaultTenant != "" {
		if err := tenant.Validate(o.DefaultTenant); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", EnvOAuthDefaultTenant, err))
		}
	}
	return errors.Join(errs...)
}

// OpenKeyring returns the key ring that seals and opens request states
// ([EnvRequestStateKeys]): the gateway needs one. A key file is created,
// readable by its owner only, if there is none.
func (c Config) OpenKeyring() (*elicit.Keyring, error) {
	var (
		k   *elicit.Keyring
		err error
	)
	switch path, isFile := strings.CutPrefix(c.RequestStateKeys, FilePrefix); {
	case c.RequestStateKeys == "":
		return nil, fmt.Errorf("%s is required by the gateway: a JSON object of key ids to secrets, {\"k1\":\"<at least %d random characters>\"}, or %s/path/to/keys.json",
			EnvRequestStateKeys, elicit.MinSecretBytes, FilePrefix)
	case isFile:
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("%s: %w", EnvRequestStateKeys, err)
		}
		k, err = elicit.LoadKeyFile(path)
	default:
		k, err = elicit.ParseKeyring(c.RequestStateKeys)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvRequestStateKeys, err)
	}
	return k, nil
}

// AWS returns the AWS SDK configuration (region, credentials, and endpoint
// overrides such as AWS_ENDPOINT_URL_DYNAMODB), loading it from the
// environment the first time: a cold start pays for it once. A bootstrap
// (built with -tags lambda.norpc) reads only what Lambda sets ([lambdaAWS]);
// any other build loads the SDK's default configuration, profiles and all.
func (c *Config) AWS(ctx context.Context) (aws.Config, error) {
	if c.aws == nil {
		getenv := c.getenv
		if getenv == nil {
			getenv = os.Getenv
		}
		cfg, err := loadAWS(ctx, getenv)
		if err != nil {
			return aws.Config{}, fmt.Errorf("config: loading AWS configuration: %w", err)
		}
		c.aws = &cfg
	}
	return *c.aws, nil
}

// ScopeStorage makes p the credentials of the table and the bucket that c
// opens from now on (package config/tenantscoped: each call's tenant's);
// every other client keeps the process's own.
func (c *Config) ScopeStorage(p aws.CredentialsProvider) { c.storage = p }

// StorageAWS returns the AWS configuration of the table's and the bucket's
// clients: [Config.AWS] with the credentials [Config.ScopeStorage] set, if any.
func (c *Config) StorageAWS(ctx context.Context) (aws.Config, error) {
	cfg, err := c.AWS(ctx)
	if err != nil || c.storage == nil {
		return cfg, err
	}
	cfg = cfg.Copy()
	cfg.Credentials = c.storage
	return cfg, nil
}

// OpenOwnTable opens, when [Config.ScopeStorage] has made the table's
// credentials the tenants', a second client of the table signing with the
// process's own, for the few items outside every tenant's keys a function
// reads (the operators' quota overrides); nil otherwise.
func (c *Config) OpenOwnTable(ctx context.Context) (store.Table, error) {
	if c.storage == nil || strings.HasPrefix(c.Table, FilePrefix) {
		return nil, nil
	}
	cfg, err := c.AWS(ctx)
	if err != nil {
		return nil, err
	}
	return dynamo.New(cfg, c.Table), nil
}

// OpenTable opens the table c names. The returned function closes it.
func (c *Config) OpenTable(ctx context.Context, warn io.Writer) (store.Table, func() error, error) {
	if c.Table == "" || c.Table == FilePrefix {
		return nil, nil, fmt.Errorf("%s is required: a DynamoDB table name, or %s/path/to/switchboard.db for an embedded file", EnvTable, FilePrefix)
	}
	path, ok := strings.CutPrefix(c.Table, FilePrefix)
	if !ok {
		cfg, err := c.StorageAWS(ctx)
		if err != nil {
			return nil, nil, err
		}
		return dynamo.New(cfg, c.Table), func() error { return nil }, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", EnvTable, err)
	}
	t, err := embedded.Open(path, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", EnvTable, err)
	}
	if c.InLambda {
		fmt.Fprintf(warn, "WARNING: %s is the embedded file %s: its data lasts only as long as this Lambda environment\n", EnvTable, path)
	}
	return t, t.Close, nil
}

// EnvPipelineARN names the RAG pipeline's Express state machine. The
// template sets it on the functions that run the pipeline; where it is unset
// (a laptop), the local gateway runs the same definition in process
// (pipeline.Local, wired by package local); package config/stepfunctions
// opens the Step Functions runner.
const EnvPipelineARN = "SWITCHBOARD_PIPELINE_ARN"

func (c Config) validatePipeline() error {
	if c.PipelineARN != "" && !strings.HasPrefix(c.PipelineARN, "arn:") {
		return fmt.Errorf("%s: %q is not a state machine ARN (arn:aws:states:REGION:ACCOUNT:stateMachine:NAME)", EnvPipelineARN, c.PipelineARN)
	}
	return nil
}

// atoi is the whole number s spells, or zero.
func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

package tenantcreds

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/switchboard-dev/switchboard/shared/callcontext"
)

// The bounds of [Options.Duration]: STS's minimum and the longest session a
// role may allow (the role's MaxSessionDuration must also allow it).
const (
	MinDuration = 15 * time.Minute
	MaxDuration = 12 * time.Hour
)

// DefaultMaxTenants is the number of tenants whose credentials a [Provider]
// keeps when [Options.MaxTenants] is zero: about a kilobyte each.
const DefaultMaxTenants = 1000

// RefreshBefore is how long before they expire a tenant's credentials are
// replaced, so that a call that signs with them near the end of their life
// (the longest function runs 5 minutes) still has them valid when AWS checks.
const RefreshBefore = 5 * time.Minute

// Options configure a [Provider].
type Options struct {
	// RoleARN is the role to assume (arn:aws:iam::<account>:role/<name>),
	// whose policies are [RolePolicy], [Boundary] and [TrustPolicy].
	RoleARN string
	// Resources are the table and bucket the session policies name.
	Resources Resources
	// Grant is what the function may do with a tenant's data.
	Grant Grant
	// Duration is how long each tenant's credentials last. If zero,
	// [MinDuration]; at most [MaxDuration].
	Duration time.Duration
	// MaxTenants bounds the tenants whose credentials are kept at once; the
	// least recently used are dropped first. If zero, [DefaultMaxTenants].
	MaxTenants int
}

// Provider is an aws.CredentialsProvider that answers the credentials of
// the tenant in the context of each call ([NewContext]): temporary
// credentials of the role in [Options], limited by the tenant's
// [SessionPolicy]. Credentials are kept per tenant and refreshed
// [RefreshBefore] they expire; concurrent calls for one tenant wait for one
// AssumeRole call. It is safe for concurrent use.
type Provider struct {
	cfg  aws.Config
	opts Options

	mu      sync.Mutex
	tenants map[string]*list.Element // of *entry
	order   *list.List               // most recently used first
}

type entry struct {
	tenant string
	creds  *aws.CredentialsCache
}

var _ aws.CredentialsProvider = (*Provider)(nil)

// New returns a Provider that assumes opts.RoleARN with cfg's credentials
// (the function's own), calling STS in cfg's region or at the endpoint cfg
// configures for it (AWS_ENDPOINT_URL_STS). It checks the options,
// including that the session policy of the longest tenant id fits STS's
// limit, and does no I/O.
func New(cfg aws.Config, opts Options) (*Provider, error) {
	if cfg.Credentials == nil {
		return nil, errors.New("tenantcreds: no credentials to assume the role with")
	}
	if err := checkARN("role ARN", opts.RoleARN, "iam", "role/", false, true); err != nil {
		return nil, fmt.Errorf("tenantcreds: %w", err)
	}
	if opts.Duration == 0 {
		opts.Duration = MinDuration
	}
	if opts.Duration < MinDuration || opts.Duration > MaxDuration {
		return nil, fmt.Errorf("tenantcreds: duration %s must be between %s and %s", opts.Duration, MinDuration, MaxDuration)
	}
	if opts.MaxTenants == 0 {
		opts.MaxTenants = DefaultMaxTenants
	}
	if opts.MaxTenants < 0 {
		return nil, fmt.Errorf("tenantcreds: max tenants %d must not be negative", opts.MaxTenants)
	}
	if _, err := SessionPolicy(strings.Repeat("a", maxTenantBytes), opts.Resources, opts.Grant); err != nil {
		return nil, fmt.Errorf("tenantcreds: %w", err)
	}
	return &Provider{cfg: cfg, opts: opts, tenants: make(map[string]*list.Element), order: list.New()}, nil
}

// maxTenantBytes is the length of the longest tenant id ([tenant.IDPattern]).
const maxTenantBytes = 63

// Retrieve implements [aws.CredentialsProvider]: the credentials of the
// tenant in ctx. A context without a tenant gets an error and no
// credentials, so a call that forgot to name its tenant fails rather than
// acting for anyone.
func (p *Provider) Retrieve(ctx context.Context) (aws.Credentials, error) {
	id, ok := FromContext(ctx)
	if !ok {
		return aws.Credentials{}, errors.New("tenantcreds: no tenant in the call's context")
	}
	creds, err := p.cache(id)
	if err != nil {
		return aws.Credentials{}, err
	}
	c, err := creds.Retrieve(ctx)
	if err != nil {
		return aws.Credentials{}, fmt.Errorf("tenantcreds: assume role %s for tenant %s: %w", p.opts.RoleARN, id, err)
	}
	return c, nil
}

// cache returns the credentials cache of tenant id, making it (with its
// session policy) if the tenant has none, and dropping the least recently
// used tenant past the bound.
func (p *Provider) cache(id string) (*aws.CredentialsCache, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if el, ok := p.tenants[id]; ok {
		p.order.MoveToFront(el)
		return el.Value.(*entry).creds, nil
	}
	policy, err := SessionPolicy(id, p.opts.Resources, p.opts.Grant)
	if err != nil {
		return nil, fmt.Errorf("tenantcreds: %w", err)
	}
	assume := newAssumeRole(&p.cfg, p.opts.RoleARN, id, SessionName(id), p.opts.Duration, policy.JSON())
	e := &entry{tenant: id, creds: aws.NewCredentialsCache(assume, func(o *aws.CredentialsCacheOptions) {
		o.ExpiryWindow = RefreshBefore
	})}
	p.tenants[id] = p.order.PushFront(e)
	for p.order.Len() > p.opts.MaxTenants {
		last := p.order.Back()
		p.order.Remove(last)
		delete(p.tenants, last.Value.(*entry).tenant)
	}
	return e.creds, nil
}

// SessionName returns the RoleSessionName of tenant id's sessions, which
// CloudTrail shows in the assumed role's ARN: "tenant-<id>", made of STS's
// allowed characters ([\w+=,.@-]) only, and when longer than STS's 64
// characters cut and ended with a hash of the whole name, so that two
// tenants never share one.
func SessionName(id string) string {
	const max = 64
	var b strings.Builder
	b.WriteString("tenant-")
	for _, r := range id {
		if r < 128 && isSessionByte(byte(r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	name := b.String()
	if len(name) <= max && name == "tenant-"+id {
		return name
	}
	h := fnv.New32a()
	h.Write([]byte(id))
	suffix := fmt.Sprintf("-%08x", h.Sum32())
	return name[:min(len(name), max-len(suffix))] + suffix
}

func isSessionByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("_+=,.@-", c) >= 0
}

type tenantKey struct{}

// NewContext returns a context whose AWS calls a [Provider] signs with
// tenant id's credentials.
func NewContext(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, tenantKey{}, id)
}

// FromContext returns the tenant [NewContext] put in ctx, if any, else the
// caller of the call ctx serves (package callcontext, which lambdafn puts in
// every call's context before anything reaches the table, elicit.Spend
// included). Reading the call's caller keeps lambdafn, which every function
// links, from linking this package.
func FromContext(ctx context.Context) (string, bool) {
	if id, ok := ctx.Value(tenantKey{}).(string); ok {
		return id, true
	}
	if c, ok := callcontext.FromContext(ctx); ok && c.Caller.Tenant != "" {
		return c.Caller.Tenant, true
	}
	return "", false
}

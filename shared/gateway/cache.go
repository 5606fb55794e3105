package gateway

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CatalogTTL is how long clients may cache what the gateway answers from the
// catalog: tools/list, prompts/list, resources/templates/list and
// server/discover. The catalog changes only with a deployment, and is the
// same for every caller, so these answers are public.
const CatalogTTL = 5 * time.Minute

// The cache scopes of MCP results (ttlMs and cacheScope, SEP-2549).
const (
	scopePublic  = "public"
	scopePrivate = "private"
)

// catalogCacheable is the caching of an answer from the catalog.
var catalogCacheable = mcp.Cacheable{TTLMs: int(CatalogTTL.Milliseconds()), CacheScope: scopePublic}

// setCacheable implements mcp.ServerOptions.SetCacheable for the results the
// go-sdk builds: every list from the catalog is public for [CatalogTTL]; a
// resource read keeps the caching its function chose ([functionCacheable]).
// resources/list is answered by listResourcesMiddleware, which sets its own.
func setCacheable(_ context.Context, req mcp.Request, c *mcp.Cacheable) {
	if _, ok := req.(*mcp.ReadResourceRequest); ok {
		*c = functionCacheable(*c)
		return
	}
	*c = catalogCacheable
}

// functionCacheable is the caching of what a function answered: what it
// chose, or, if it chose no valid scope, private and immediately stale:
// functions serve the caller's own data, which any write may change.
func functionCacheable(c mcp.Cacheable) mcp.Cacheable {
	if (c.CacheScope != scopePublic && c.CacheScope != scopePrivate) || c.TTLMs < 0 {
		return mcp.Cacheable{TTLMs: 0, CacheScope: scopePrivate}
	}
	return c
}

// narrower is the caching of an answer made of parts cached as a and b:
// private if either is, for the shorter time.
func narrower(a, b mcp.Cacheable) mcp.Cacheable {
	out := mcp.Cacheable{TTLMs: min(a.TTLMs, b.TTLMs), CacheScope: scopePublic}
	if a.CacheScope == scopePrivate || b.CacheScope == scopePrivate {
		out.CacheScope = scopePrivate
	}
	return out
}

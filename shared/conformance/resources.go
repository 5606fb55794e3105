package conformance

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// The fixture resources' URIs.
const (
	staticTextURI   = "test://static-text"
	staticBinaryURI = "test://static-binary"
	watchedURI      = "test://watched-resource"
	templateURI     = "test://template/{id}/data"
	resourcePath    = "conformance/resources"
)

func resources() []*catalog.Resource {
	r := func(uri, tmpl, name, title, description, mime string) *catalog.Resource {
		example := uri
		if tmpl != "" {
			example = "test://template/123/data"
		}
		return &catalog.Resource{
			URI: uri, URITemplate: tmpl, Name: name, Title: title, Description: description, MIMEType: mime,
			Family: Family, Function: resourcePath, Limits: limits, Example: example,
		}
	}
	return []*catalog.Resource{
		r(staticTextURI, "", "static-text", "Static text", "A fixed text resource.", "text/plain"),
		r(staticBinaryURI, "", "static-binary", "Static binary", "A fixed binary resource: a 1x1 red PNG.", "image/png"),
		r(watchedURI, "", "watched-resource", "Watched resource", "A text resource to subscribe to. Switchboard is stateless: it accepts subscriptions but sends no update notifications.", "text/plain"),
		r("", templateURI, "template-data", "Template data", "JSON data for any id, naming the id it was read with.", "application/json"),
	}
}

// resourceFunction serves the fixture resources.
var resourceFunction = lambdafn.Function{Path: resourcePath, Build: func(d lambdafn.Deps) lambda.Handler {
	return lambdafn.Resources(resourcePath, d, lambdafn.ResourceFuncs{Read: readResource})
}}

func readResource(_ context.Context, _ tenant.Caller, uri string) (*mcp.ReadResourceResult, error) {
	// The fixtures are the same for every caller and never change: any cache
	// may keep them. (A function that says nothing is taken to serve the
	// caller's own data: private, immediately stale.)
	one := func(c *mcp.ResourceContents) (*mcp.ReadResourceResult, error) {
		c.URI = uri
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}, Cacheable: mcp.Cacheable{TTLMs: int(time.Hour.Milliseconds()), CacheScope: "public"}}, nil
	}
	switch uri {
	case staticTextURI:
		return one(&mcp.ResourceContents{MIMEType: "text/plain", Text: "This is the content of the static text resource."})
	case staticBinaryURI:
		return one(&mcp.ResourceContents{MIMEType: "image/png", Blob: redPixelPNG()})
	case watchedURI:
		return one(&mcp.ResourceContents{MIMEType: "text/plain", Text: "This is the content of the watched resource."})
	}
	if rest, ok := strings.CutPrefix(uri, "test://template/"); ok {
		if id, ok := strings.CutSuffix(rest, "/data"); ok && id != "" && !strings.Contains(id, "/") {
			b, err := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
			if err != nil {
				return nil, err
			}
			return one(&mcp.ResourceContents{MIMEType: "application/json", Text: string(b)})
		}
	}
	return nil, fault.NotFound("no resource %q: the fixtures are %s, %s, %s and %s", uri, staticTextURI, staticBinaryURI, watchedURI, templateURI)
}

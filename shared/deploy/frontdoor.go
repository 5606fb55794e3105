package deploy

import (
	"fmt"
	"hash/fnv"
	"strings"
	"time"
	"unicode"

	"github.com/switchboard-dev/switchboard/shared/catalog"
)

// The front doors the template's FrontDoor parameter chooses between.
const (
	// FrontDoorRestStreaming is an API Gateway REST API whose Lambda proxy
	// integration streams the gateway's answers (the default): progress
	// reaches the client as the gateway writes it, and a call may run up to
	// [MaxStreamingTimeout].
	FrontDoorRestStreaming = "RestStreaming"
	// FrontDoorHttpApi is an API Gateway HTTP API: cheaper per request, but
	// it buffers the answer and ends every call at 30 s.
	FrontDoorHttpApi = "HttpApi"
)

// MaxStreamingTimeout is the longest a REST API's streamed response may last,
// and the most a streaming integration's timeout may be.
// https://docs.aws.amazon.com/apigateway/latest/developerguide/response-transfer-mode.html
const MaxStreamingTimeout = 15 * time.Minute

// streamingMargin is how much longer than the longest function the gateway
// may run behind a streaming front door: it invokes the function, then
// answers.
const streamingMargin = 30 * time.Second

// RestStage is the REST API's stage, the first part of the execute-api
// URL's path (https://<api>.execute-api.<region>.amazonaws.com/<stage>/mcp).
const RestStage = "v1"

// StreamingGatewayTimeout is the gateway's timeout behind the streaming
// front door, and its integration's: long enough to wait for the longest
// function of cat (its own timeout) and answer, within [MaxStreamingTimeout].
func StreamingGatewayTimeout(cat *catalog.Catalog) time.Duration {
	var longest time.Duration
	for _, f := range cat.Functions() {
		longest = max(longest, f.Limits.Timeout)
	}
	return min(longest+streamingMargin, MaxStreamingTimeout)
}

// templateFrontDoor is what the template needs to build either front door
// from [Routes].
type templateFrontDoor struct {
	Routes []templateRoute
	// RestResources are the REST API's resources, parents before children.
	RestResources []restResource
	// DeploymentID is the REST API deployment's logical ID: it changes with
	// the routes and the timeout, since CloudFormation deploys a REST API
	// again only when its deployment resource is a new one.
	DeploymentID string
	Stage        string
	// StreamingTimeout is the gateway's timeout in seconds behind the REST
	// API, and HttpTimeout behind the HTTP API.
	StreamingTimeout, HttpTimeout int
}

// templateRoute is a route of both APIs: the HTTP API's route key, and the
// REST API's method on the resource of its path.
type templateRoute struct {
	Route
	MethodID, ResourceID string
}

// restResource is one path part of the REST API. ParentID empty means the
// API's root.
type restResource struct {
	ID, ParentID, PathPart string
}

// frontDoorOf describes both front doors for cat's gateway.
func frontDoorOf(cat *catalog.Catalog) templateFrontDoor {
	fd := templateFrontDoor{
		Stage:            RestStage,
		StreamingTimeout: int(StreamingGatewayTimeout(cat) / time.Second),
		HttpTimeout:      int(GatewayLimits.Timeout / time.Second),
	}
	ids := map[string]string{} // path -> resource logical ID
	h := fnv.New64a()
	fmt.Fprintf(h, "%d", fd.StreamingTimeout)
	for _, r := range Routes {
		parent := ""
		var path string
		for _, part := range strings.Split(strings.TrimPrefix(r.Path, "/"), "/") {
			path += "/" + part
			id, ok := ids[path]
			if !ok {
				id = "RestApi" + pascal(path) + "Resource"
				ids[path] = id
				fd.RestResources = append(fd.RestResources, restResource{ID: id, ParentID: parent, PathPart: part})
			}
			parent = id
		}
		fd.Routes = append(fd.Routes, templateRoute{Route: r, MethodID: "RestApi" + r.ID + "Method", ResourceID: parent})
		fmt.Fprintf(h, "|%s %s", r.Method, r.Path)
	}
	fd.DeploymentID = fmt.Sprintf("RestApiDeployment%08x", uint32(h.Sum64()))
	return fd
}

// pascal turns a path into the letters and digits of a logical ID:
// "/.well-known/oauth-protected-resource" gives "WellKnownOauthProtectedResource".
func pascal(path string) string {
	var b strings.Builder
	up := true
	for _, c := range path {
		if !unicode.IsLetter(c) && !unicode.IsDigit(c) {
			up = true
			continue
		}
		if up {
			c = unicode.ToUpper(c)
		}
		b.WriteRune(c)
		up = false
	}
	return b.String()
}

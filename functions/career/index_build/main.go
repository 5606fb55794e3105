// Command index_build is the Lambda function career/index_build; see [careerfn.IndexBuild].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/blobs"
	"github.com/switchboard-dev/switchboard/shared/config/providers"
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/careerfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(careerfn.IndexBuild, lambdafn.Openers{Blobs: blobs.Open, Providers: providers.Open, Credentials: tenantscoped.Open})
}

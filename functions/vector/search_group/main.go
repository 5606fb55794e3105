// Command search_group is the Lambda function vector/search_group; see [vectorfn.SearchGroup].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/blobs"
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/vectorfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(vectorfn.SearchGroup, lambdafn.Openers{Blobs: blobs.Open, Credentials: tenantscoped.Open})
}

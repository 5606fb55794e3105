// Command document_delete is the Lambda function vector/document_delete; see [vectorfn.DocumentDelete].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/blobs"
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/vectorfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(vectorfn.DocumentDelete, lambdafn.Openers{Blobs: blobs.Open, Credentials: tenantscoped.Open})
}

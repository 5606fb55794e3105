// Command document_list is the Lambda function vector/document_list; see [vectorfn.DocumentList].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/vectorfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(vectorfn.DocumentList, lambdafn.Openers{Credentials: tenantscoped.Open})
}

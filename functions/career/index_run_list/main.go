// Command index_run_list is the Lambda function career/index_run_list; see [careerfn.IndexRunList].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/careerfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(careerfn.IndexRunList, lambdafn.Openers{Credentials: tenantscoped.Open})
}

// Command atom_get is the Lambda function career/atom_get; see [careerfn.AtomGet].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/careerfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(careerfn.AtomGet, lambdafn.Openers{Credentials: tenantscoped.Open})
}

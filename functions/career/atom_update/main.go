// Command atom_update is the Lambda function career/atom_update; see [careerfn.AtomUpdate].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/careerfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(careerfn.AtomUpdate, lambdafn.Openers{Credentials: tenantscoped.Open})
}

// Command atom_create is the Lambda function career/atom_create; see [careerfn.AtomCreate].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/careerfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(careerfn.AtomCreate, lambdafn.Openers{Credentials: tenantscoped.Open})
}

// Command atom_list is the Lambda function career/atom_list; see [careerfn.AtomList].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/careerfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(careerfn.AtomList, lambdafn.Openers{Credentials: tenantscoped.Open})
}

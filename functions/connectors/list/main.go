// Command list is the Lambda function connectors/list; see [connectorfn.List].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/connectors"
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/connectorfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(connectorfn.List, lambdafn.Openers{Connectors: connectors.Open, Credentials: tenantscoped.Open})
}

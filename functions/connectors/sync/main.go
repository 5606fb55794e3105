// Command sync is the Lambda function connectors/sync; see [connectorfn.Sync].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/connectors"
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/connectorfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(connectorfn.Sync, lambdafn.Openers{Connectors: connectors.Open, Credentials: tenantscoped.Open})
}

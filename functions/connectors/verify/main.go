// Command verify is the Lambda function connectors/verify; see [connectorfn.Verify].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/connectors"
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/connectorfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(connectorfn.Verify, lambdafn.Openers{Connectors: connectors.Open, Credentials: tenantscoped.Open})
}

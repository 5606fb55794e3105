// Command proxy is the Lambda function connectors/proxy; see [connectorfn.Proxy].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/connectors"
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/connectorfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(connectorfn.Proxy, lambdafn.Openers{Connectors: connectors.Open, Credentials: tenantscoped.Open})
}

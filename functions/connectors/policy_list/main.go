// Command policy_list is the Lambda function connectors/policy_list; see [connectorfn.PolicyList].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/connectors"
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/connectorfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(connectorfn.PolicyList, lambdafn.Openers{Connectors: connectors.Open, Credentials: tenantscoped.Open})
}

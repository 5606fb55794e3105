// Command policy_set is the Lambda function connectors/policy_set; see [connectorfn.PolicySet].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/connectors"
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/connectorfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(connectorfn.PolicySet, lambdafn.Openers{Connectors: connectors.Open, Credentials: tenantscoped.Open})
}

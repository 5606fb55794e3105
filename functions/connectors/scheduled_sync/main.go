// Command scheduled_sync is the Lambda function connectors/scheduled_sync; see [connectorfn.ScheduledSync].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/connectors"
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/connectorfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(connectorfn.ScheduledSync, lambdafn.Openers{Connectors: connectors.Open, Credentials: tenantscoped.Open})
}

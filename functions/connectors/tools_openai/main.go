// Command tools_openai is the Lambda function connectors/tools_openai; see [connectorfn.ToolsOpenAI].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/connectors"
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/connectorfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(connectorfn.ToolsOpenAI, lambdafn.Openers{Connectors: connectors.Open, Credentials: tenantscoped.Open})
}

// Command settings_get is the Lambda function assistant/settings_get; see [assistantfn.SettingsGet].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/assistantfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(assistantfn.SettingsGet, lambdafn.Openers{Credentials: tenantscoped.Open})
}

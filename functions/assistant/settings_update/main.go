// Command settings_update is the Lambda function assistant/settings_update; see [assistantfn.SettingsUpdate].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/providers"
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/assistantfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(assistantfn.SettingsUpdate, lambdafn.Openers{Providers: providers.Open, Credentials: tenantscoped.Open})
}

// Command prompt_override_reset is the Lambda function assistant/prompt_override_reset; see [assistantfn.PromptOverrideReset].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/assistantfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(assistantfn.PromptOverrideReset, lambdafn.Openers{Credentials: tenantscoped.Open})
}

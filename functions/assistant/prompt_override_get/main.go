// Command prompt_override_get is the Lambda function assistant/prompt_override_get; see [assistantfn.PromptOverrideGet].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/assistantfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(assistantfn.PromptOverrideGet, lambdafn.Openers{Credentials: tenantscoped.Open})
}

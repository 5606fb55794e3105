// Command prompt_override_set is the Lambda function assistant/prompt_override_set; see [assistantfn.PromptOverrideSet].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/assistantfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(assistantfn.PromptOverrideSet, lambdafn.Openers{Credentials: tenantscoped.Open})
}

// Command prompt_get is the Lambda function assistant/prompt_get; see [assistantfn.PromptGet].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/assistantfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(assistantfn.PromptGet, lambdafn.Openers{Credentials: tenantscoped.Open})
}

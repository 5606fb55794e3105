// Command chat is the Lambda function chat/chat; see [chatfn.Chat].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/invoker"
	"github.com/switchboard-dev/switchboard/shared/config/providers"
	"github.com/switchboard-dev/switchboard/shared/config/stepfunctions"
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/chatfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(chatfn.Chat, lambdafn.Openers{Providers: providers.Open, Pipeline: stepfunctions.Open, Invoker: invoker.Open, Credentials: tenantscoped.Open})
}

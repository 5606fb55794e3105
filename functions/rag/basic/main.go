// Command basic is the Lambda function rag/basic; see [handlers.RAGBasic].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/launch"
)

func main() { launch.Function(handlers.RAGBasic) }

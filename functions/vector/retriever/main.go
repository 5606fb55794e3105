// Command retriever is the Lambda function vector/retriever; see [handlers.VectorRetriever].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/launch"
)

func main() { launch.Function(handlers.VectorRetriever) }

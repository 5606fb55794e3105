// Command health_check is the Lambda function rag/health_check; see [handlers.RAGHealthCheck].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/launch"
)

func main() { launch.Function(handlers.RAGHealthCheck) }

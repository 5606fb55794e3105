// Command rephrase is the Lambda function vector/rephrase, the RAG pipeline's first step; see [handlers.VectorRephrase].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/launch"
)

func main() { launch.Function(handlers.VectorRephrase) }

// Command basic_rerank is the Lambda function rag/basic_rerank; see [handlers.RAGBasicRerank].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/launch"
)

func main() { launch.Function(handlers.RAGBasicRerank) }

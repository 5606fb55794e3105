// Command document_delete is the Lambda function vector/document_delete; see [handlers.VectorDocumentDelete].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/launch"
)

func main() { launch.Function(handlers.VectorDocumentDelete) }

// Command document_list is the Lambda function vector/document_list; see [handlers.VectorDocumentList].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/launch"
)

func main() { launch.Function(handlers.VectorDocumentList) }

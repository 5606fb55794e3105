// Command document_ingest is the Lambda function vector/document_ingest; see [handlers.VectorDocumentIngest].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/launch"
)

func main() { launch.Function(handlers.VectorDocumentIngest) }

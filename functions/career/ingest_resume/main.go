// Command ingest_resume is the Lambda function career/ingest_resume; see [handlers.CareerIngestResume].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/launch"
)

func main() { launch.Function(handlers.CareerIngestResume) }

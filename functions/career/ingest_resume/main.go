// Command ingest_resume is the Lambda function career/ingest_resume; see [careerfn.IngestResume].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/blobs"
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/careerfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(careerfn.IngestResume, lambdafn.Openers{Blobs: blobs.Open, Credentials: tenantscoped.Open})
}

// Command index_build is the Lambda function career/index_build; see [handlers.CareerIndexBuild].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/launch"
)

func main() { launch.Function(handlers.CareerIndexBuild) }

// Command index_run_list is the Lambda function career/index_run_list; see [handlers.CareerIndexRunList].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/launch"
)

func main() { launch.Function(handlers.CareerIndexRunList) }

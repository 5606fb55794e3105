// Command store_create is the Lambda function vector/store_create; see [handlers.VectorStoreCreate].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/launch"
)

func main() { launch.Function(handlers.VectorStoreCreate) }

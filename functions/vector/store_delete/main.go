// Command store_delete is the Lambda function vector/store_delete; see [handlers.VectorStoreDelete].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/launch"
)

func main() { launch.Function(handlers.VectorStoreDelete) }

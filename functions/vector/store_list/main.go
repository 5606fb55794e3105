// Command store_list is the Lambda function vector/store_list; see [handlers.VectorStoreList].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/launch"
)

func main() { launch.Function(handlers.VectorStoreList) }

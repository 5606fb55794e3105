// Command atom_update is the Lambda function career/atom_update; see [handlers.CareerAtomUpdate].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/launch"
)

func main() { launch.Function(handlers.CareerAtomUpdate) }

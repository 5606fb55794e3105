// Command atom_get is the Lambda function career/atom_get; see [handlers.CareerAtomGet].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/launch"
)

func main() { launch.Function(handlers.CareerAtomGet) }

// Command atom_create is the Lambda function career/atom_create; see [handlers.CareerAtomCreate].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/launch"
)

func main() { launch.Function(handlers.CareerAtomCreate) }

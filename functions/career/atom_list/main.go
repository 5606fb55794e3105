// Command atom_list is the Lambda function career/atom_list; see [handlers.CareerAtomList].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/launch"
)

func main() { launch.Function(handlers.CareerAtomList) }

//go:build !conformance && !lambda.norpc

package main

import "github.com/switchboard-dev/switchboard/shared/launch"

// extras is empty: the gateway serves the default catalog.
var extras launch.Extras

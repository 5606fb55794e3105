//go:build lambda.norpc && !conformance

package main

import (
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/launch/lambdagateway"
)

// run serves the default catalog inside Lambda; it takes no arguments.
func run([]string) int { return lambdagateway.Main(catalog.Default()) }

//go:build conformance && !lambda.norpc

package main

import "github.com/switchboard-dev/switchboard/shared/conformance"

// extras adds the MCP conformance suite's fixtures (test tools, resources and
// prompts) to the default catalog; scripts/test builds the gateway this way
// to run the suite.
var extras = conformance.Extras()

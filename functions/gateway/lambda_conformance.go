//go:build lambda.norpc && conformance

package main

import (
	"fmt"
	"os"

	"github.com/switchboard-dev/switchboard/shared/conformance"
	"github.com/switchboard-dev/switchboard/shared/launch/lambdagateway"
)

// run serves the default catalog and the conformance suite's fixtures inside
// Lambda: the deployed gateway as scripts/stack --conformance runs it for
// the suite, the fixtures' functions beside the template's.
func run([]string) int {
	cat, err := conformance.Extras().Catalog()
	if err != nil {
		fmt.Fprintln(os.Stderr, "switchboard:", err)
		return 1
	}
	return lambdagateway.Main(cat)
}

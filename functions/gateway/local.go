//go:build !lambda.norpc

package main

import "github.com/switchboard-dev/switchboard/shared/launch"

// run serves every function in one process, or the gateway alone inside Lambda.
func run(args []string) int { return launch.Gateway(args, extras) }

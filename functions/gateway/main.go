// Command gateway is Switchboard's MCP endpoint. Run locally it serves every
// tool in one process with embedded storage:
//
//	go run ./functions/gateway [--addr 127.0.0.1:8080] [--data .switchboard] [--stdio]
//
// Deployed, it is the Lambda behind API Gateway that authenticates callers
// and invokes each tool's own function. The deployed build (-tags
// lambda.norpc, lambda.go) is that Lambda alone, linking none of the tools'
// code; any other build (local.go) is the local server too.
package main

import "os"

func main() { os.Exit(run(os.Args[1:])) }

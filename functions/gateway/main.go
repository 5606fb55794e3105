// Command gateway is Switchboard's MCP endpoint. Run locally it serves every
// tool in one process with embedded storage:
//
//	go run ./functions/gateway [--addr 127.0.0.1:8080] [--data .switchboard] [--stdio]
//
// Deployed, it is the Lambda behind API Gateway that authenticates callers
// and invokes each tool's own function.
package main

import (
	"os"

	"github.com/switchboard-dev/switchboard/shared/launch"
)

func main() { os.Exit(launch.Gateway(os.Args[1:], extras)) }

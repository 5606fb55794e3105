// Command web_search is the Lambda function websearch/web_search; see [websearchfn.WebSearch].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/search"
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/websearchfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(websearchfn.WebSearch, lambdafn.Openers{WebSearch: search.Open, Credentials: tenantscoped.Open})
}

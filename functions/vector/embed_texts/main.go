// Command embed_texts is the Lambda function vector/embed_texts; see [vectorfn.EmbedTexts].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/providers"
	"github.com/switchboard-dev/switchboard/shared/handlers/vectorfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(vectorfn.EmbedTexts, lambdafn.Openers{Providers: providers.Open})
}

// Command keyring is the Lambda function behind the template's
// Custom::KeyRing resources (KeyStore ssm): it creates, keeps, rotates and
// deletes a key ring in an SSM SecureString parameter; see [keyring.Resource].
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/cfn"
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/keyring"
)

func main() {
	cfg := config.FromEnv(os.Getenv)
	awsCfg, err := cfg.AWS(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, "keyring:", err)
		os.Exit(1)
	}
	lambda.Start(cfn.LambdaWrap(keyring.Resource{AWS: awsCfg}.Handle))
}

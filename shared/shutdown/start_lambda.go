//go:build lambda.norpc

package shutdown

import "os"

// init starts the registration in a bootstrap inside Lambda.
func init() {
	api := os.Getenv("AWS_LAMBDA_RUNTIME_API")
	if api == "" {
		close(done)
		return
	}
	go func() {
		result = Register(api)
		close(done)
	}()
}

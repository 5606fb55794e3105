//go:build !lambda.norpc

package shutdown

// init registers nothing in a build other than a bootstrap's: the local
// server, the scripts and the tests may inherit AWS_LAMBDA_RUNTIME_API
// (under sam local, say) without being the function's runtime.
func init() { close(done) }

// Package bedrock holds the embedder and generator that call Amazon Bedrock
// Runtime through the AWS SDK: Amazon Titan Text Embeddings V2 through
// InvokeModel, and any chat model through the Converse API.
//
//	rt := bedrockruntime.NewFromConfig(awsCfg)
//	emb, err := bedrock.NewEmbedder(rt, &bedrock.EmbedderOptions{Dims: 512})
//	gen, err := bedrock.NewGenerator(rt, "amazon.nova-micro-v1:0")
//	out, err := gen.Generate(ctx, provider.GenerateRequest{Task: provider.TaskGrade, Question: q, Documents: docs})
//	// out.Text == "yes" or "no"; out.Provider == "bedrock", out.Model == "amazon.nova-micro-v1:0"
//
// Both call the action bedrock:InvokeModel on the model's ARN
// (arn:aws:bedrock:REGION::foundation-model/MODEL, or an inference profile's
// ARN and the foundation models it routes to); the generator's streamed
// replies (ConverseStream) call bedrock:InvokeModelWithResponseStream. The SDK signs requests with
// SigV4 and retries throttling and server errors itself (three tries by
// default); what still fails for those reasons is a [fault.Unavailable].
package bedrock

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/smithy-go"

	"github.com/switchboard-dev/switchboard/shared/fault"
)

// Name is the provider name results carry.
const Name = "bedrock"

// Runtime is the part of the Bedrock Runtime API the embedder and generator
// call; *bedrockruntime.Client implements it.
type Runtime interface {
	InvokeModel(ctx context.Context, in *bedrockruntime.InvokeModelInput, optFns ...func(*bedrockruntime.Options)) (*bedrockruntime.InvokeModelOutput, error)
	Converse(ctx context.Context, in *bedrockruntime.ConverseInput, optFns ...func(*bedrockruntime.Options)) (*bedrockruntime.ConverseOutput, error)
	ConverseStream(ctx context.Context, in *bedrockruntime.ConverseStreamInput, optFns ...func(*bedrockruntime.Options)) (*bedrockruntime.ConverseStreamOutput, error)
}

var _ Runtime = (*bedrockruntime.Client)(nil)

// transient are the Bedrock error codes after which a later call may
// succeed: throttling, capacity and model warm-up, timeouts.
var transient = map[string]bool{
	"ThrottlingException":           true,
	"ServiceUnavailableException":   true,
	"ServiceQuotaExceededException": true,
	"ModelNotReadyException":        true,
	"ModelTimeoutException":         true,
	"InternalServerException":       true,
}

// classify turns an SDK error from op on model into one that says what
// failed: transient failures become [fault.Unavailable], access denials say
// which permission is missing, and every other service error (a
// ValidationException for a malformed request or an unknown model) keeps
// its code and message. A cancelled or expired context stays what it is;
// other transport failures (the SDK already retried them) are unavailable.
func classify(err error, op, model string) error {
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("bedrock: %s %s: %w", op, model, err)
		}
		return fault.Unavailable(err, "bedrock: %s %s: %v", op, model, err)
	}
	code, msg := apiErr.ErrorCode(), apiErr.ErrorMessage()
	switch {
	case transient[code]:
		return fault.Unavailable(err, "bedrock: %s %s: %s: %s", op, model, code, msg)
	case code == "AccessDeniedException":
		action := "bedrock:InvokeModel"
		if op == "converse-stream" {
			action = "bedrock:InvokeModelWithResponseStream"
		}
		return fmt.Errorf("bedrock: %s %s: %s: %s (the caller needs %s on the model, and access to the model must be granted in the Bedrock console): %w", op, model, code, msg, action, err)
	}
	return fmt.Errorf("bedrock: %s %s: %s: %s: %w", op, model, code, msg, err)
}

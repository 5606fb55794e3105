package lambdafn

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/switchboard-dev/switchboard/shared/elicit"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/store"
)

// spendOnce spends the request state req carries if the tool marked it for
// one use (elicit.InputRequired.Once), before the tool runs: a second call
// with the same state is refused.
func spendOnce(ctx context.Context, table store.Table, req invoke.Request) error {
	if req.Input == nil || req.Input.State == nil || !req.Input.State.Once {
		return nil
	}
	err := elicit.Spend(ctx, table, req.Caller.Tenant, req.Input.State, time.Now())
	switch {
	case errors.Is(err, elicit.ErrReplayed):
		return &fault.Error{Kind: fault.KindConflict, Message: err.Error(), Err: err}
	case err != nil:
		return fault.Unavailable(err, "recording that the request state was used failed; retry")
	}
	return nil
}

// respond builds the answer to a call that returned out and err, names its
// outcome for the log and the audit trail, and returns the error to log, if
// any. A tool that asked for input (an *elicit.InputRequired) gets the
// gateway's InputRequiredResult, and for front ends that cannot ask, a tool
// error saying what it asked and which protocol version carries the question.
func (h *toolHandler[In, Out]) respond(out Out, err error, req invoke.Request) (invoke.Response, string, error) {
	if err == nil {
		return toolResponse(out, nil, req.TraceID), "ok", nil
	}
	var ask *elicit.InputRequired
	if !errors.As(err, &ask) {
		return toolResponse(out, err, req.TraceID), "error: " + string(fault.KindOf(err)), err
	}
	if verr := ask.Validate(); verr != nil {
		err = fmt.Errorf("%s asked for input it cannot ask: %w", h.tool.Name, verr)
		return toolResponse(out, err, req.TraceID), "error: " + string(fault.KindOf(err)), err
	}
	resp := toolResponse(out, &fault.Error{Kind: fault.KindInvalid, Message: ask.Unsupported(h.tool.Name, req.ProtocolVersion)}, req.TraceID)
	resp.InputRequired = ask
	return resp, "input required", nil
}

// Package remote runs the workers of a vector search in other functions: a
// [vector.Searcher] that hands each call, as the JSON of a
// [vector.SearchGroupInput], to the function serving the internal tool
// optimizer_vs-search-group, with the caller in the envelope. The retriever
// uses it when a search spans more than one group of shards: on AWS through
// invoke.Lambda, one invocation per group at a time, in parallel; locally
// through invoke.Local, with the same JSON.
//
//	s := remote.New(inv, "vector/search_group", "optimizer_vs-search-group")
//	svc := vector.New(table, blobs, emb, &vector.Options{Searcher: s})
//
// A worker that fails fails the search with an error naming the worker.
// Throttled invocations are not retried here: the Lambda client's standard
// retryer already retries throttling and service errors, with backoff.
package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aws/smithy-go"

	"github.com/switchboard-dev/switchboard/shared/callcontext"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/retrieval"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
	"github.com/switchboard-dev/switchboard/shared/vector"
)

// Searcher is a [vector.Searcher] whose workers are invocations of a
// function. It is safe for concurrent use.
type Searcher struct {
	inv      invoke.Invoker
	function string
	tool     string
}

var _ vector.Searcher = (*Searcher)(nil)

// New returns a Searcher that calls tool, served by function (its path
// under functions/), through inv.
func New(inv invoke.Invoker, function, tool string) *Searcher {
	return &Searcher{inv: inv, function: function, tool: tool}
}

// Stats implements [vector.Searcher].
func (s *Searcher) Stats(ctx context.Context, c tenant.Caller, g vector.ShardGroup, terms []string) (retrieval.Stats, error) {
	out, err := s.call(ctx, c, vector.SearchGroupInput{Op: vector.OpStats, Group: g, Terms: terms})
	if err == nil && out.Stats == nil {
		err = s.incomplete(vector.OpStats)
	}
	if err != nil {
		return retrieval.Stats{}, err
	}
	return *out.Stats, nil
}

// Search implements [vector.Searcher].
func (s *Searcher) Search(ctx context.Context, c tenant.Caller, g vector.ShardGroup, q vector.GroupQuery) (vector.GroupResult, error) {
	out, err := s.call(ctx, c, vector.SearchGroupInput{Op: vector.OpSearch, Group: g, Query: &q})
	if err == nil && out.Result == nil {
		err = s.incomplete(vector.OpSearch)
	}
	if err != nil {
		return vector.GroupResult{}, err
	}
	return *out.Result, nil
}

// Vectors implements [vector.Searcher].
func (s *Searcher) Vectors(ctx context.Context, c tenant.Caller, g vector.ShardGroup, hits []retrieval.Hit) ([][]float32, error) {
	out, err := s.call(ctx, c, vector.SearchGroupInput{Op: vector.OpVectors, Group: g, Hits: hits})
	if err == nil && len(out.Vectors) != len(hits) {
		err = s.incomplete(vector.OpVectors)
	}
	if err != nil {
		return nil, err
	}
	return out.Vectors, nil
}

func (s *Searcher) incomplete(op string) error {
	return fmt.Errorf("remote: %s answered %s without its result", s.function, op)
}

// call invokes the worker for c with in, under the trace of the tool call
// ctx serves.
func (s *Searcher) call(ctx context.Context, c tenant.Caller, in vector.SearchGroupInput) (vector.SearchGroupOutput, error) {
	args, err := invoke.Marshal(in)
	if err != nil {
		return vector.SearchGroupOutput{}, fmt.Errorf("remote: encoding %s call: %w", in.Op, err)
	}
	info, _ := callcontext.FromContext(ctx)
	resp, err := s.inv.Invoke(ctx, s.function, &invoke.Request{
		Method: invoke.MethodCallTool, Tool: s.tool, Arguments: args,
		Caller: c, TraceID: info.TraceID, RequestID: info.RequestID,
	})
	if ctx.Err() != nil {
		// Cancelled because another worker failed, or out of time: say so,
		// rather than how this call ended, so the cause is what is reported.
		return vector.SearchGroupOutput{}, fmt.Errorf("remote: %s %s: %w", s.function, in.Op, ctx.Err())
	}
	if err != nil {
		return vector.SearchGroupOutput{}, s.failed(err)
	}
	if resp.Error != nil {
		return vector.SearchGroupOutput{}, s.refused(in.Op, resp.Error)
	}
	var res struct {
		StructuredContent json.RawMessage `json:"structuredContent"`
	}
	var out vector.SearchGroupOutput
	if err := json.Unmarshal(resp.Result, &res); err != nil {
		return vector.SearchGroupOutput{}, fmt.Errorf("remote: decoding the answer of %s: %w", s.function, err)
	}
	if err := json.Unmarshal(res.StructuredContent, &out); err != nil {
		return vector.SearchGroupOutput{}, fmt.Errorf("remote: decoding the %s result of %s: %w", in.Op, s.function, err)
	}
	return out, nil
}

// failed reports a worker that did not answer: it crashed or timed out, or
// Lambda refused the invocation.
func (s *Searcher) failed(err error) error {
	var fe *invoke.FunctionError
	var api smithy.APIError
	switch {
	case errors.As(err, &fe) && fe.Type == "Sandbox.Timedout":
		return fault.Unavailable(err, "a search worker (%s) timed out; retry, or search fewer stores", s.function)
	case errors.As(err, &fe):
		return fault.Unavailable(err, "a search worker (%s) failed (%s); retry", s.function, fe.Type)
	case errors.As(err, &api):
		return fault.Unavailable(err, "invoking a search worker (%s) failed (%s); retry", s.function, api.ErrorCode())
	}
	return fault.Unavailable(err, "invoking a search worker (%s) failed; retry", s.function)
}

// refused turns a worker's tool error back into the error the in-process
// worker would have returned: a gone shard wraps [store.ErrNotFound], so
// that the coordinator reads the manifests again; an unavailable or
// conflicting shard keeps its kind and message. Anything else is a call the
// coordinator should not have made, or a worker's bug: not the caller's
// fault.
func (s *Searcher) refused(op string, e *invoke.Error) error {
	switch kind := fault.Kind(e.Kind); kind {
	case fault.KindNotFound:
		return fmt.Errorf("remote: %s %s: %s: %w", s.function, op, e.Message, store.ErrNotFound)
	case fault.KindUnavailable, fault.KindConflict:
		return &fault.Error{Kind: kind, Message: e.Message, Err: fmt.Errorf("remote: %s %s", s.function, op)}
	}
	return fmt.Errorf("remote: %s refused %s (%s): %s", s.function, op, e.Kind, e.Message)
}

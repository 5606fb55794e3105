package rag

import (
	"cmp"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/invoke"
)

// The steps a pipeline run may fall back on (seed 000's degradation).
const (
	StepRephrase = "rephrase"
	StepRetrieve = "retrieve"
	StepGrade    = "grade"
)

// refusal returns the retriever's refusal of the caller's arguments, as the
// step classified it (kind invalid_argument, Field naming the argument, or
// not_found for a store that does not exist), as the error of the call,
// naming the request's field at fault: the retriever's question is the
// request's query, and a store it did not find is one of stores. It is the
// caller's mistake, not a step failure: the run ends, and the call fails
// with it.
func refusal(r *invoke.Error) error {
	msg := strings.TrimPrefix(r.Message, r.Field+": ")
	if fault.Kind(r.Kind) == fault.KindNotFound {
		return &fault.Error{Kind: fault.KindNotFound, Field: "stores", Message: msg}
	}
	field := cmp.Or(r.Field, "arguments")
	if field == "question" {
		field = "query"
	}
	return fault.Invalid(field, "%s", msg)
}

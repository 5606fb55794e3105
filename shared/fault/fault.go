// Package fault classifies the errors domain code returns, so that each
// boundary can report them the way its protocol expects: a tool result with
// isError for MCP hosts, a JSON-RPC error code on the compatibility endpoint.
//
//	if conv == nil {
//		return fault.NotFound("conversation %q does not exist; create it with memory_get_or_create", id)
//	}
//	...
//	switch fault.KindOf(err) { case fault.KindNotFound: ... }
package fault

import (
	"errors"
	"fmt"
	"time"
)

// Kind is the class of a failure.
type Kind string

// The kinds of failure. Anything unclassified is [KindInternal].
const (
	// KindInvalid: the caller sent something malformed; Field names what to change.
	KindInvalid Kind = "invalid_argument"
	// KindNotFound: the thing named does not exist (for this tenant).
	KindNotFound Kind = "not_found"
	// KindConflict: a concurrent change won; retrying may succeed.
	KindConflict Kind = "conflict"
	// KindUnavailable: a dependency failed or timed out; retrying later may succeed.
	KindUnavailable Kind = "unavailable"
	// KindRateLimited: the caller is over one of its limits (a request rate,
	// calls in flight); RetryAfter says when to try again.
	KindRateLimited Kind = "rate_limited"
	// KindQuotaExceeded: the change would take the caller past a storage
	// quota; retrying will not help until something is deleted.
	KindQuotaExceeded Kind = "quota_exceeded"
	// KindInternal: a bug or an unexpected failure.
	KindInternal Kind = "internal"
)

// Error is a classified failure. Its message is written for the caller: it
// says what was wrong and, where it can, what to change.
type Error struct {
	Kind    Kind
	Field   string // the input field at fault: for KindInvalid, and for KindNotFound when an argument names the missing thing
	Message string
	Err     error // the underlying cause, if any; not shown to callers
	// RetryAfter, for KindRateLimited, is how long the caller should wait
	// before calling again; the message states it too.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	if e.Field != "" {
		return e.Field + ": " + e.Message
	}
	return e.Message
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// Invalid returns a [KindInvalid] error about field.
func Invalid(field, format string, args ...any) error {
	return &Error{Kind: KindInvalid, Field: field, Message: fmt.Sprintf(format, args...)}
}

// NotFound returns a [KindNotFound] error.
func NotFound(format string, args ...any) error {
	return &Error{Kind: KindNotFound, Message: fmt.Sprintf(format, args...)}
}

// Conflict returns a [KindConflict] error wrapping cause.
func Conflict(cause error, format string, args ...any) error {
	return &Error{Kind: KindConflict, Message: fmt.Sprintf(format, args...), Err: cause}
}

// Unavailable returns a [KindUnavailable] error wrapping cause.
func Unavailable(cause error, format string, args ...any) error {
	return &Error{Kind: KindUnavailable, Message: fmt.Sprintf(format, args...), Err: cause}
}

// RateLimited returns a [KindRateLimited] error wrapping cause, whose message
// ends by saying when to retry: after retryAfter, rounded up to a tenth of a
// second (at least a tenth, so a caller never retries at once).
func RateLimited(cause error, retryAfter time.Duration, format string, args ...any) error {
	tenths := max((retryAfter+100*time.Millisecond-1)/(100*time.Millisecond), 1)
	retryAfter = tenths * 100 * time.Millisecond
	msg := fmt.Sprintf(format, args...) + fmt.Sprintf("; retry after %d.%d s", tenths/10, tenths%10)
	return &Error{Kind: KindRateLimited, Message: msg, Err: cause, RetryAfter: retryAfter}
}

// QuotaExceeded returns a [KindQuotaExceeded] error.
func QuotaExceeded(format string, args ...any) error {
	return &Error{Kind: KindQuotaExceeded, Message: fmt.Sprintf(format, args...)}
}

// RetryAfter returns how long the first [*Error] in err's chain asks the
// caller to wait, and whether it asks at all.
func RetryAfter(err error) (time.Duration, bool) {
	if e, ok := errors.AsType[*Error](err); ok && e.RetryAfter > 0 {
		return e.RetryAfter, true
	}
	return 0, false
}

// KindOf returns the kind of the first [*Error] in err's chain, or
// [KindInternal] if there is none.
func KindOf(err error) Kind {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Kind
	}
	return KindInternal
}

// Public returns what a caller may be told about err: the message of a
// classified error, or a fixed sentence for anything else, so internal
// details never leak to hosts.
func Public(err error) (kind Kind, field, message string) {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Kind, e.Field, e.Error()
	}
	return KindInternal, "", "internal error; the server log has the details"
}

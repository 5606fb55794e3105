package lambdafn

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambda/messages"

	"github.com/switchboard-dev/switchboard/shared/invoke"
)

// Streamed returns h able to answer a request that asks for a stream
// ([invoke.Request.Stream]) with a streamed answer: each notification the
// call makes (ReportProgress, LogToClient) is written as a frame as it is
// made, the response last (see [invoke.ReadStream]). A call that makes none
// before it ends is answered whole, as h answers it, and so is a request
// that asks for no stream: what it fails with before its first frame is
// h's error, or its panic. [Start] runs a function whose catalog entry
// reports progress ([catalog.Tool.Progress]) through it, as an aws-lambda-go
// handler returning an io.Reader, which aws-lambda-go (built with
// lambda.norpc) sends to the Runtime API as it is read: a response stream.
func Streamed(h lambda.Handler) invoke.StreamHandler { return streamed{h} }

type streamed struct{ lambda.Handler }

// Serve is InvokeStream in the form aws-lambda-go's Start takes: a
// function of the payload answering a reader.
func (s streamed) Serve(ctx context.Context, payload json.RawMessage) (io.Reader, error) {
	return s.InvokeStream(ctx, payload)
}

// InvokeStream implements [invoke.StreamHandler].
func (s streamed) InvokeStream(ctx context.Context, payload []byte) (io.Reader, error) {
	st := &stream{started: make(chan struct{})}
	st.r, st.w = io.Pipe()
	type outcome struct {
		out      []byte
		err      error
		panicked any
	}
	done := make(chan outcome, 1)
	go func() {
		var o outcome
		func() {
			defer func() { o.panicked = recover() }()
			o.out, o.err = s.Handler.Invoke(context.WithValue(ctx, sinkKey{}, st.write), payload)
		}()
		if !st.finish() {
			done <- o
			return
		}
		switch {
		case o.panicked != nil:
			st.w.CloseWithError(messages.InvokeResponse_Error{Type: "Runtime.Panic", Message: fmt.Sprint(o.panicked)})
		case o.err != nil:
			st.w.CloseWithError(o.err)
		default:
			st.w.Write(o.out)
			st.w.Close()
		}
	}()
	select {
	case <-st.started:
		return streamReader{st.r}, nil
	case o := <-done:
		if o.panicked != nil {
			panic(o.panicked) // as the handler's own panic: aws-lambda-go reports it and exits
		}
		if o.err != nil {
			return nil, o.err
		}
		return bytes.NewReader(o.out), nil
	}
}

// stream is one call's streamed answer: its frames go to w, which the
// answer's reader r reads.
type stream struct {
	r *io.PipeReader
	w *io.PipeWriter

	mu       sync.Mutex
	started  chan struct{} // closed at the first frame
	begun    bool
	finished bool
}

// write sends n as a frame, unless the call has ended. It blocks until the
// frame is read: a reader that has stopped (closed) fails it, and the
// notification is dropped.
func (st *stream) write(n invoke.Notification) {
	frame, err := invoke.AppendFrame(nil, n)
	if err != nil {
		return
	}
	st.mu.Lock()
	if st.finished {
		st.mu.Unlock()
		return
	}
	if !st.begun {
		st.begun = true
		close(st.started)
	}
	st.mu.Unlock()
	st.w.Write(frame)
}

// finish marks the call ended and reports whether its answer is streaming.
func (st *stream) finish() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.finished = true
	return st.begun
}

// streamReader is the reader of a streamed answer. It has no exported
// fields, so aws-lambda-go, which encodes a handler's answer as JSON first,
// gets "{}" and sends the reader itself; Close (called by aws-lambda-go
// once the answer is sent or has failed) lets a call still writing stop.
type streamReader struct{ r *io.PipeReader }

func (s streamReader) Read(p []byte) (int, error) { return s.r.Read(p) }

func (s streamReader) Close() error { return s.r.Close() }

// ContentType is the streamed answer's type, which aws-lambda-go sends.
func (streamReader) ContentType() string { return "application/x-ndjson" }

type sinkKey struct{}

// sinkOf returns where a call that asked for a stream sends its
// notifications, if it runs under [Streamed].
func sinkOf(ctx context.Context, req invoke.Request) func(invoke.Notification) {
	if !req.Stream {
		return nil
	}
	sink, _ := ctx.Value(sinkKey{}).(func(invoke.Notification))
	return sink
}

package invoke

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/aws/aws-lambda-go/lambda"
)

// A streamed answer ([Request.Stream]) is what a function writes when asked
// to stream: each notification as it makes it, in a frame of its own, and
// its response last:
//
//	{"notification":{"progress":1,"total":3,"message":"embedded 16 of 48 passages"}}\n
//	{"notification":{"level":"info","logger":"vector","data":"…"}}\n
//	{"result":…}
//
// A frame is one line: a JSON object whose one key is "notification", its
// value a [Notification], compact (so without a raw newline), then "\n".
// The response is the rest of the stream, as [EncodeResponse] writes it,
// without the notifications already sent. A function that makes no
// notification answers its response alone, which is also a streamed answer.
// On AWS the function writes it as a response stream (aws-lambda-go's
// io.Reader answer) and the gateway reads it through
// InvokeWithResponseStream; in process, [Local.InvokeStream] reads it from
// the handler's [StreamHandler.InvokeStream].

// frameStart opens every notification frame.
const frameStart = `{"notification":`

// MaxFrameBytes bounds one notification frame.
const MaxFrameBytes = 1 << 20

// MaxResponseBytes bounds the response a function answers: Lambda's limit
// for a synchronous invocation's response, which a streamed response is
// held to here as well.
const MaxResponseBytes = 6 << 20

// AppendFrame appends the frame of n to dst.
func AppendFrame(dst []byte, n Notification) ([]byte, error) {
	buf := bytes.NewBuffer(dst)
	buf.WriteString(frameStart)
	if err := MarshalTo(buf, n); err != nil {
		return dst, fmt.Errorf("invoke: encoding notification: %w", err)
	}
	buf.WriteString("}\n")
	return buf.Bytes(), nil
}

// ReadStream reads a streamed answer from r, passing each notification to
// onNote as its frame arrives, and returns the response that follows them.
// A frame over [MaxFrameBytes] or a response over [MaxResponseBytes] is an
// error, and so is a stream that ends inside a frame; r's own errors are
// returned as they are.
func ReadStream(r io.Reader, onNote func(Notification)) ([]byte, error) {
	br := bufio.NewReaderSize(r, 4096)
	for {
		head, err := br.Peek(len(frameStart))
		if string(head) != frameStart {
			if err != nil && !errors.Is(err, io.EOF) {
				return nil, err
			}
			return readResponse(br)
		}
		line, err := readLine(br)
		if err != nil {
			return nil, err
		}
		var f struct {
			Notification Notification `json:"notification"`
		}
		if err := json.Unmarshal(line, &f); err != nil {
			return nil, fmt.Errorf("invoke: undecodable notification frame: %w", err)
		}
		onNote(f.Notification)
	}
}

// readLine reads a frame up to its newline, at most MaxFrameBytes.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		part, err := br.ReadSlice('\n')
		line = append(line, part...)
		switch {
		case len(line) > MaxFrameBytes:
			return nil, fmt.Errorf("invoke: a notification frame is larger than %d bytes", MaxFrameBytes)
		case err == nil:
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			return nil, errors.New("invoke: the stream ended inside a notification frame")
		default:
			return nil, err
		}
	}
}

// readResponse reads the rest of the stream, at most MaxResponseBytes.
func readResponse(br *bufio.Reader) ([]byte, error) {
	out, err := io.ReadAll(io.LimitReader(br, MaxResponseBytes+1))
	if err != nil {
		return nil, err
	}
	if len(out) > MaxResponseBytes {
		return nil, fmt.Errorf("invoke: the response is larger than Lambda's %d bytes", MaxResponseBytes)
	}
	return out, nil
}

// StreamInvoker is an [Invoker] that can invoke a function for a streamed
// answer: it sets req.Stream, passes each notification to onNote as the
// function makes it, and returns the response payload as [RawInvoker]'s
// InvokeRaw does (its notifications are those a function that cannot
// stream answered with it). It fails as Invoke does. onNote is called from
// one goroutine at a time, before InvokeStream returns.
type StreamInvoker interface {
	RawInvoker
	InvokeStream(ctx context.Context, function string, req *Request, onNote func(Notification)) ([]byte, error)
}

// StreamHandler is a Lambda handler that can answer a [Request] asking for
// a stream with a streamed answer (lambdafn's handlers of tools that report
// progress): InvokeStream returns what the function writes, as an
// aws-lambda-go handler returning an io.Reader answers. A failure after the
// reader is returned is the reader's error.
type StreamHandler interface {
	lambda.Handler
	InvokeStream(ctx context.Context, payload []byte) (io.Reader, error)
}

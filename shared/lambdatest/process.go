package lambdatest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Process is a bootstrap binary running against a [Runtime].
type Process struct {
	rt      *Runtime
	cmd     *exec.Cmd
	started time.Time
	exited  chan struct{}
	waitErr error
	output  lockedBuffer
}

// Start execs the bootstrap at path with env (a list of KEY=VALUE, added to
// a minimal environment: PATH and HOME) plus AWS_LAMBDA_RUNTIME_API pointing
// at rt. The process's stdout and stderr are kept for [Process.Output].
func Start(rt *Runtime, path string, env []string) (*Process, error) {
	return start(rt, path, env, nil)
}

// start is [Start], also copying the process's output to log if not nil,
// and then keeping only the last [tailBytes] of it for [Process.Output].
func start(rt *Runtime, path string, env []string, log io.Writer) (*Process, error) {
	cmd := exec.Command(path)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, env...)
	cmd.Env = append(cmd.Env, "AWS_LAMBDA_RUNTIME_API="+rt.Addr())
	p := &Process{rt: rt, cmd: cmd, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = &p.output, &p.output
	if log != nil {
		p.output.limit = tailBytes
		cmd.Stdout = io.MultiWriter(log, &p.output)
		cmd.Stderr = cmd.Stdout
	}
	p.started = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("lambdatest: starting %s: %w", path, err)
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// Started returns when the process was exec'd.
func (p *Process) Started() time.Time { return p.started }

// Exited is closed when the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// CPUTime returns the user and system time the process used, once it has
// exited (zero before): unlike wall time, it hardly depends on what else
// the machine runs.
func (p *Process) CPUTime() time.Duration {
	select {
	case <-p.exited:
	default:
		return 0
	}
	if st := p.cmd.ProcessState; st != nil {
		return st.UserTime() + st.SystemTime()
	}
	return 0
}

// Output returns what the process has written to stdout and stderr so far.
func (p *Process) Output() string { return p.output.String() }

// Invoke sends payload to the process through its runtime and waits for the
// answer, as [Runtime.Invoke] does, but gives up, with the process's output in
// the error, if the process exits first.
func (p *Process) Invoke(ctx context.Context, payload []byte) (*Result, error) {
	return p.InvokeStreaming(ctx, payload, nil)
}

// InvokeStreaming is [Process.Invoke] passing each piece of the response
// body to onChunk as it arrives, as [Runtime.InvokeStreaming] does.
func (p *Process) InvokeStreaming(ctx context.Context, payload []byte, onChunk func(Chunk)) (*Result, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case <-p.exited:
			cancel(fmt.Errorf("process exited (%v) before answering; output:\n%s", p.waitErr, p.Output()))
		case <-ctx.Done():
		}
	}()
	res, err := p.rt.InvokeStreaming(ctx, payload, onChunk)
	if err != nil {
		if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
			return nil, fmt.Errorf("lambdatest: %w", cause)
		}
		return nil, err
	}
	return res, nil
}

// Stop ends the process as Lambda ends an environment: SIGTERM, then
// SIGKILL if it is still running half a second later. It returns the exit
// error of a process that had already exited on its own, and nil otherwise.
func (p *Process) Stop() error {
	select {
	case <-p.exited:
		return p.waitErr
	default:
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(500 * time.Millisecond):
		p.cmd.Process.Kill()
		<-p.exited
	}
	return nil
}

// tailBytes is how much of its output a process started with a log keeps.
const tailBytes = 64 << 10

// lockedBuffer is a bytes.Buffer safe for the concurrent writes of a
// process's stdout and stderr; with a limit, it keeps about the last limit
// bytes.
type lockedBuffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	limit int
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.limit > 0 && b.buf.Len()+len(p) > 2*b.limit {
		tail := b.buf.Bytes()[max(0, b.buf.Len()-b.limit):]
		b.buf = *bytes.NewBuffer(append([]byte(nil), tail...))
	}
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Build builds the main package pkg (an import path, or a directory relative
// to the working directory such as ./testdata/echo) into a bootstrap at out
// for this machine, as the deployed functions are built: without cgo, with
// the lambda.norpc tag.
func Build(pkg, out string) error {
	// go test puts its own GOROOT/bin first on the PATH (since Go 1.19).
	gocmd, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("lambdatest: the go command is needed to build %s: %w", pkg, err)
	}
	cmd := exec.Command(gocmd, "build", "-tags", "lambda.norpc", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("lambdatest: building %s: %w\n%s", pkg, err, b)
	}
	return nil
}

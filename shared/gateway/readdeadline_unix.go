//go:build unix

package gateway

import (
	"io"
	"net"
	"os"
	"syscall"
)

// rawConn returns c's file descriptor, or nil if c has none.
func rawConn(c net.Conn) syscall.RawConn {
	if sc, ok := c.(syscall.Conn); ok {
		if raw, err := sc.SyscallConn(); err == nil {
			return raw
		}
	}
	return nil
}

// readNow reads what the connection has, without waiting, as its Read
// would: ok is false if it has nothing yet (or could not be read so).
func (c *holdingConn) readNow(p []byte) (n int, err error, ok bool) {
	var errno error
	if c.rd.raw.Read(func(fd uintptr) bool {
		for {
			n, errno = syscall.Read(int(fd), p)
			if errno != syscall.EINTR {
				return true
			}
		}
	}) != nil {
		return 0, nil, false // closed, or past a deadline: Read says which
	}
	switch {
	case errno == syscall.EAGAIN:
		return 0, nil, false
	case errno != nil:
		return 0, &net.OpError{Op: "read", Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: os.NewSyscallError("read", errno)}, true
	case n == 0:
		return 0, io.EOF, true
	}
	return n, nil, true
}

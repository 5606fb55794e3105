//go:build !unix

package gateway

import (
	"net"
	"syscall"
)

// rawConn returns nil: without unix's read, deadlines go through at once.
func rawConn(net.Conn) syscall.RawConn { return nil }

// readNow is never called: rawConn returns nil.
func (c *holdingConn) readNow([]byte) (int, error, bool) { return 0, nil, false }

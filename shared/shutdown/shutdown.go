// Package shutdown registers, as a Lambda bootstrap starts, the internal
// extension that has Lambda send the process SIGTERM before it ends the
// environment: an extension of no events, whose next event never comes.
//
// An internal extension must register before the runtime asks for its
// first event, so the registration, a round trip to the runtime API, is on
// every cold start's path unless it overlaps other work. In a bootstrap
// (built with -tags lambda.norpc, with AWS_LAMBDA_RUNTIME_API set) this
// package starts it in its initialisation: it imports neither net/http nor
// any module's package (a test checks), so it is initialised before
// net/http, the AWS SDK and the go-sdk, whose initialisers the round trip
// then overlaps. The bootstrap calls [Wait] before lambda.Start. Any other
// build, such as the local server, registers nothing.
package shutdown

import (
	"bufio"
	"fmt"
	"net"
	"net/textproto"
	"os"
	"strconv"
	"strings"
	"time"
)

// ExtensionName is the name the extension registers under.
const ExtensionName = "switchboard-sigterm"

// The Extensions API, https://docs.aws.amazon.com/lambda/latest/dg/runtimes-extensions-api.html.
const (
	registerPath = "/2020-01-01/extension/register"
	// NextPath is where an extension asks for its next event.
	NextPath = "/2020-01-01/extension/event/next"
	// HeaderIdentifier carries an extension's identifier.
	HeaderIdentifier = "Lambda-Extension-Identifier"
	headerName       = "Lambda-Extension-Name"
	// roundTrip bounds the registration: the runtime API is local.
	roundTrip = 5 * time.Second
)

var (
	done   = make(chan struct{})
	result error
)

// Wait waits for the registration that began as the process started and
// returns its error: nil when it registered, or when nothing was to be
// registered (outside Lambda, or in a build other than a bootstrap).
func Wait() error {
	<-done
	return result
}

// Register registers the extension at the runtime API at addr (host:port)
// and then asks for its next event, which tells Lambda the extension has
// finished its init; that request stays open until the environment ends.
func Register(addr string) error {
	id, err := RegisterExtension(addr, ExtensionName, nil)
	if err != nil {
		return err
	}
	conn, err := net.DialTimeout("tcp", addr, roundTrip)
	if err != nil {
		return fmt.Errorf("extension %s: asking for its next event: %w", ExtensionName, err)
	}
	if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\n%s: %s\r\n\r\n", NextPath, addr, HeaderIdentifier, id); err != nil {
		conn.Close()
		return fmt.Errorf("extension %s: asking for its next event: %w", ExtensionName, err)
	}
	go awaitNext(conn)
	return nil
}

// awaitNext reads the answer to the extension's request for its next event,
// which comes, if at all, as the environment ends; one that is not a
// success means Lambda refused the request (and will send no SIGTERM), which
// it reports.
func awaitNext(conn net.Conn) {
	defer conn.Close()
	status, err := textproto.NewReader(bufio.NewReader(conn)).ReadLine()
	if err == nil && !strings.HasPrefix(status, "HTTP/1.1 200") && !strings.HasPrefix(status, "HTTP/1.0 200") {
		fmt.Fprintf(os.Stderr, "switchboard: extension %s: the runtime API answered its request for the next event %q\n", ExtensionName, status)
	}
}

// RegisterExtension registers the internal extension name for events (nil
// for none) at the runtime API at addr and returns its identifier. Its
// HTTP/1.1 request is written here rather than with net/http, which a
// bootstrap has not initialised yet when this package registers.
func RegisterExtension(addr, name string, events []string) (string, error) {
	id, err := register(addr, name, events)
	if err != nil {
		return "", fmt.Errorf("registering extension %s: %w", name, err)
	}
	return id, nil
}

func register(addr, name string, events []string) (string, error) {
	conn, err := net.DialTimeout("tcp", addr, roundTrip)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(roundTrip))
	quoted := make([]string, len(events))
	for i, e := range events {
		quoted[i] = strconv.Quote(e)
	}
	body := `{"events":[` + strings.Join(quoted, ",") + `]}`
	if _, err := fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\n%s: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		registerPath, addr, headerName, name, len(body), body); err != nil {
		return "", err
	}
	r := textproto.NewReader(bufio.NewReader(conn))
	status, err := r.ReadLine()
	if err != nil {
		return "", fmt.Errorf("reading the runtime API's answer: %w", err)
	}
	proto, rest, _ := strings.Cut(status, " ")
	code, _, _ := strings.Cut(rest, " ")
	if !strings.HasPrefix(proto, "HTTP/1.") {
		return "", fmt.Errorf("the runtime API answered %q, not HTTP/1.x", status)
	}
	if n, err := strconv.Atoi(code); err != nil || n != 200 {
		return "", fmt.Errorf("the runtime API answered %s", rest)
	}
	header, err := r.ReadMIMEHeader()
	if err != nil {
		return "", fmt.Errorf("reading the runtime API's answer: %w", err)
	}
	id := header.Get(HeaderIdentifier)
	if id == "" {
		return "", fmt.Errorf("the runtime API's answer has no %s", HeaderIdentifier)
	}
	return id, nil
}

// Package shutdown registers, as a Lambda bootstrap starts, the internal
// extension that has Lambda send the process SIGTERM before it ends the
// environment: an extension of no events, whose next event never comes.
//
// An internal extension must register before the runtime asks for its
// first event, so the registration, a round trip to the runtime API, is on
// every cold start's path unless it overlaps other work. This package starts
// it in its initialisation, when AWS_LAMBDA_RUNTIME_API is set: it imports
// no more than package net needs, so it is initialised before net/http, the
// AWS SDK and the go-sdk, whose initialisers the round trip then overlaps.
// A bootstrap calls [Wait] before lambda.Start. Outside Lambda, where the
// variable is unset, it does nothing.
package shutdown

import (
	"bufio"
	"fmt"
	"io"
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
	registerPath     = "/2020-01-01/extension/register"
	nextPath         = "/2020-01-01/extension/event/next"
	headerName       = "Lambda-Extension-Name"
	headerIdentifier = "Lambda-Extension-Identifier"
	// roundTrip bounds the registration: the runtime API is local.
	roundTrip = 5 * time.Second
)

var (
	done   = make(chan struct{})
	result error
)

func init() {
	api := os.Getenv("AWS_LAMBDA_RUNTIME_API")
	if api == "" {
		close(done)
		return
	}
	go func() {
		result = Register(api)
		close(done)
	}()
}

// Wait waits for the registration that began as the process started and
// returns its error: nil when it registered, or outside Lambda.
func Wait() error {
	<-done
	return result
}

// Register registers the extension at the runtime API at addr (host:port)
// and then asks for its next event, which tells Lambda the extension has
// finished its init; that request stays open until the environment ends.
// The two requests are HTTP/1.1 written here rather than with net/http,
// which is initialised after this package.
func Register(addr string) error {
	id, err := register(addr)
	if err != nil {
		return fmt.Errorf("registering extension %s: %w", ExtensionName, err)
	}
	conn, err := net.DialTimeout("tcp", addr, roundTrip)
	if err != nil {
		return fmt.Errorf("extension %s: asking for its next event: %w", ExtensionName, err)
	}
	if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\n%s: %s\r\n\r\n", nextPath, addr, headerIdentifier, id); err != nil {
		conn.Close()
		return fmt.Errorf("extension %s: asking for its next event: %w", ExtensionName, err)
	}
	go io.Copy(io.Discard, conn) // the answer comes, if at all, as the environment ends
	return nil
}

// register makes the registration request and returns the extension's
// identifier.
func register(addr string) (string, error) {
	conn, err := net.DialTimeout("tcp", addr, roundTrip)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(roundTrip))
	const body = `{"events":[]}`
	if _, err := fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\n%s: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		registerPath, addr, headerName, ExtensionName, len(body), body); err != nil {
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
	id := header.Get(headerIdentifier)
	if id == "" {
		return "", fmt.Errorf("the runtime API's answer has no %s", headerIdentifier)
	}
	return id, nil
}

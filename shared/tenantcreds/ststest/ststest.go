// Package ststest is a stand-in for AWS STS in tests: an HTTP server
// speaking its Query API (form-encoded AssumeRole, XML answers and errors)
// that checks each request's SigV4 signature by signing it again, and
// issues credentials named after the session, so that a test can tell which
// tenant's session signed a call.
//
//	s := ststest.New(t)
//	cfg := s.Config() // or AWS_ENDPOINT_URL_STS=s.URL with [FunctionCreds]
//	// ... strings.HasPrefix(accessKey, ststest.KeyPrefix("tenant-acme"))
package ststest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// FunctionCreds are the function's own credentials, with which it calls
// STS; the server refuses a request signed otherwise.
var FunctionCreds = aws.Credentials{AccessKeyID: "AKIDFUNCTION", SecretAccessKey: "function-secret"}

// Region is the region clients of the server sign for.
const Region = "eu-west-1"

// Server is a stand-in for STS: an HTTP server speaking its Query API
// (form-encoded Action=AssumeRole&Version=2011-06-15, XML answers), which
// checks each request's SigV4 signature against [FunctionCreds] and issues
// credentials named after the session. It is safe for concurrent use.
type Server struct {
	t *testing.T
	// URL is the server's endpoint.
	URL string

	mu       sync.Mutex
	calls    []url.Values
	lifetime time.Duration // of the credentials issued
	refuse   string        // an error code to answer instead, if set
	gate     chan struct{} // if set, each call waits for it to close
}

// New starts a server for the test; credentials it issues last an hour.
func New(t *testing.T) *Server {
	s := &Server{t: t, lifetime: time.Hour}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// SetLifetime sets how long the credentials issued from now on last.
func (s *Server) SetLifetime(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lifetime = d
}

// SetRefuse makes the server answer AssumeRole with the error code
// ("AccessDenied", "ExpiredToken", ...); "" answers again.
func (s *Server) SetRefuse(code string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuse = code
}

// SetGate makes each call wait until gate is closed.
func (s *Server) SetGate(gate chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gate = gate
}

// Config returns the AWS configuration of a client of the server: its
// endpoint, [Region] and [FunctionCreds].
func (s *Server) Config() aws.Config {
	return aws.Config{
		Region:       Region,
		BaseEndpoint: aws.String(s.URL),
		Credentials:  credentials.StaticCredentialsProvider{Value: FunctionCreds},
	}
}

// CallCount returns how many AssumeRole calls the server has answered.
func (s *Server) CallCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.calls)
}

// LastCall returns the form of the last AssumeRole call.
func (s *Server) LastCall() url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[len(s.calls)-1]
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.t.Errorf("reading the request: %v", err)
		return
	}
	s.checkSignature(r, body)
	form, err := url.ParseQuery(string(body))
	if r.Method != http.MethodPost || r.URL.Path != "/" || err != nil ||
		r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
		s.t.Errorf("request %s %s type %q body %q, want a form POSTed to /", r.Method, r.URL.Path, r.Header.Get("Content-Type"), body)
	}
	if form.Get("Action") != "AssumeRole" || form.Get("Version") != "2011-06-15" {
		s.t.Errorf("Action %q Version %q, want AssumeRole 2011-06-15", form.Get("Action"), form.Get("Version"))
	}
	s.mu.Lock()
	s.calls = append(s.calls, form)
	n, lifetime, refuse, gate := len(s.calls), s.lifetime, s.refuse, s.gate
	s.mu.Unlock()
	if gate != nil {
		<-gate
	}
	w.Header().Set("Content-Type", "text/xml")
	if refuse != "" {
		status := http.StatusBadRequest // ExpiredToken, ...
		if refuse == "AccessDenied" {
			status = http.StatusForbidden
		}
		w.WriteHeader(status)
		fmt.Fprintf(w, `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type><Code>%s</Code><Message>User: arn:aws:sts::123456789012:assumed-role/fn/x is not authorized to perform: sts:AssumeRole on resource: %s</Message></Error><RequestId>req-%d</RequestId></ErrorResponse>`,
			refuse, form.Get("RoleArn"), n)
		return
	}
	session := form.Get("RoleSessionName")
	fmt.Fprintf(w, `<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <AssumeRoleResult>
    <AssumedRoleUser>
      <Arn>arn:aws:sts::123456789012:assumed-role/switchboard-tenant/%[1]s</Arn>
      <AssumedRoleId>AROA3XFRBF535PLBIFPI4:%[1]s</AssumedRoleId>
    </AssumedRoleUser>
    <Credentials>
      <AccessKeyId>%[4]s</AccessKeyId>
      <SecretAccessKey>secret-%[1]s-%[2]d</SecretAccessKey>
      <SessionToken>token-%[1]s-%[2]d</SessionToken>
      <Expiration>%[3]s</Expiration>
    </Credentials>
    <PackedPolicySize>12</PackedPolicySize>
    <SourceIdentity></SourceIdentity>
  </AssumeRoleResult>
  <ResponseMetadata><RequestId>req-%[2]d</RequestId></ResponseMetadata>
</AssumeRoleResponse>`, session, n, time.Now().Add(lifetime).UTC().Format(time.RFC3339), KeyOf(session, n))
}

// KeyOf returns the access key id of the nth credentials the server
// issues, to session: letters and digits only, as DynamoDB Local requires.
func KeyOf(session string, n int) string {
	return KeyPrefix(session) + strconv.Itoa(n)
}

// KeyPrefix is how every access key issued to session begins.
func KeyPrefix(session string) string {
	return "ASIA" + strings.ReplaceAll(session, "-", "") + "n"
}

// checkSignature signs the request again with the function's credentials,
// its own date and the headers it signed, and compares the two.
func (s *Server) checkSignature(r *http.Request, body []byte) {
	auth := r.Header.Get("Authorization")
	date, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential="+FunctionCreds.AccessKeyID+"/"+date.Format("20060102")+"/"+Region+"/sts/aws4_request, ") || err != nil {
		s.t.Errorf("Authorization %q (X-Amz-Date %q) is not a SigV4 signature for sts in "+Region+" by %s", auth, r.Header.Get("X-Amz-Date"), FunctionCreds.AccessKeyID)
		return
	}
	_, signed, _ := strings.Cut(auth, "SignedHeaders=")
	signed, _, _ = strings.Cut(signed, ",")
	again, _ := http.NewRequest(r.Method, "http://"+r.Host+r.URL.RequestURI(), bytes.NewReader(body))
	for _, h := range strings.Split(signed, ";") {
		if h != "host" && h != "content-length" {
			again.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
		}
	}
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	if err := v4.NewSigner().SignHTTP(context.Background(), FunctionCreds, again, hash, "sts", Region, date); err != nil {
		s.t.Errorf("signing again: %v", err)
		return
	}
	if got, want := auth, again.Header.Get("Authorization"); got != want {
		s.t.Errorf("signature mismatch:\n got %s\nwant %s", got, want)
	}
}

package tenantcreds

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
	"github.com/aws/aws-sdk-go-v2/service/sts"
)

// The function's own credentials, with which it calls STS.
var functionCreds = aws.Credentials{AccessKeyID: "AKIDFUNCTION", SecretAccessKey: "function-secret"}

// stsServer is a stand-in for STS: an HTTP server speaking its Query API
// (form-encoded Action=AssumeRole&Version=2011-06-15, XML answers), which
// checks each request's SigV4 signature against the function's credentials
// and issues credentials named after the session.
type stsServer struct {
	t   *testing.T
	url string

	mu       sync.Mutex
	calls    []url.Values
	lifetime time.Duration // of the credentials issued
	refuse   string        // an error code to answer instead, if set
	gate     chan struct{} // if set, each call waits for it to close
}

func newSTSServer(t *testing.T) *stsServer {
	s := &stsServer{t: t, lifetime: time.Hour}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

// client returns an STS client of the server, signing with the function's
// credentials, without retries (a refusal is answered once).
func (s *stsServer) client() *sts.Client {
	return sts.New(sts.Options{
		Region:           "eu-west-1",
		BaseEndpoint:     aws.String(s.url),
		Credentials:      credentials.StaticCredentialsProvider{Value: functionCreds},
		RetryMaxAttempts: 1,
	})
}

func (s *stsServer) callCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.calls)
}

func (s *stsServer) lastCall() url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[len(s.calls)-1]
}

func (s *stsServer) serve(w http.ResponseWriter, r *http.Request) {
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
</AssumeRoleResponse>`, session, n, time.Now().Add(lifetime).UTC().Format(time.RFC3339), keyOf(session, n))
}

// keyOf returns the access key id of the nth credentials the server
// issues, to session: letters and digits only, as DynamoDB Local requires.
func keyOf(session string, n int) string {
	return keyPrefix(session) + strconv.Itoa(n)
}

// keyPrefix is how every access key issued to session begins.
func keyPrefix(session string) string {
	return "ASIA" + strings.ReplaceAll(session, "-", "") + "n"
}

// checkSignature signs the request again with the function's credentials,
// its own date and the headers it signed, and compares the two.
func (s *stsServer) checkSignature(r *http.Request, body []byte) {
	auth := r.Header.Get("Authorization")
	date, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential="+functionCreds.AccessKeyID+"/"+date.Format("20060102")+"/eu-west-1/sts/aws4_request, ") || err != nil {
		s.t.Errorf("Authorization %q (X-Amz-Date %q) is not a SigV4 signature for sts in eu-west-1 by %s", auth, r.Header.Get("X-Amz-Date"), functionCreds.AccessKeyID)
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
	if err := v4.NewSigner().SignHTTP(context.Background(), functionCreds, again, hash, "sts", "eu-west-1", date); err != nil {
		s.t.Fatal(err)
	}
	if got, want := auth, again.Header.Get("Authorization"); got != want {
		s.t.Errorf("signature mismatch:\n got %s\nwant %s", got, want)
	}
}

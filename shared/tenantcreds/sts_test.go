package tenantcreds

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/google/go-cmp/cmp"
)

// answer is one answer of a stand-in STS: a status and a body.
type answer struct {
	status int
	body   string
}

// cannedSTS starts a server that gives answers in turn (the last one again
// once they run out), records the requests and their forms, and returns the
// configuration of a client of it.
func cannedSTS(t *testing.T, answers ...answer) (aws.Config, func() []*http.Request, func() []url.Values) {
	t.Helper()
	var (
		mu    sync.Mutex
		reqs  []*http.Request
		forms []url.Values
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		mu.Lock()
		a := answers[min(len(reqs), len(answers)-1)]
		reqs, forms = append(reqs, r), append(forms, r.PostForm)
		mu.Unlock()
		w.WriteHeader(a.status)
		w.Write([]byte(a.body))
	}))
	t.Cleanup(srv.Close)
	cfg := aws.Config{Region: "eu-west-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.StaticCredentialsProvider{Value: aws.Credentials{AccessKeyID: "AKIDFN", SecretAccessKey: "s", SessionToken: "fn-token"}}}
	lock := func() func() { mu.Lock(); return mu.Unlock }
	return cfg, func() []*http.Request { defer lock()(); return reqs }, func() []url.Values { defer lock()(); return forms }
}

func stsError(code string) string {
	return `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type><Code>` + code +
		`</Code><Message>the message of ` + code + `</Message></Error><RequestId>r</RequestId></ErrorResponse>`
}

func TestAssumeRoleAnswersAndErrors(t *testing.T) {
	raw, err := os.ReadFile("testdata/assume-role-answer.xml")
	if err != nil {
		t.Fatal(err)
	}
	good := string(raw)
	ok := answer{http.StatusOK, good}
	without := func(field string) string {
		start, end := strings.Index(good, "<"+field+">"), strings.Index(good, "</"+field+">")
		return good[:start] + good[end+len(field)+3:]
	}
	tests := []struct {
		name    string
		answers []answer
		calls   int
		want    string // in the error; "" for success
	}{
		{"an answer gives its credentials", []answer{ok}, 1, ""},
		{"a throttling error is retried", []answer{{http.StatusBadRequest, stsError("Throttling")}, ok}, 2, ""},
		{"a server error is retried", []answer{{http.StatusServiceUnavailable, stsError("ServiceUnavailable")}, ok}, 2, ""},
		{"throttling every time ends with the code", []answer{{http.StatusBadRequest, stsError("Throttling")}}, 3, "Throttling (400): the message of Throttling"},
		{"a refusal is not retried", []answer{{http.StatusForbidden, stsError("AccessDenied")}, ok}, 1, "AccessDenied (403): the message of AccessDenied"},
		{"a malformed policy is not retried", []answer{{http.StatusBadRequest, stsError("MalformedPolicyDocument")}, ok}, 1, "MalformedPolicyDocument"},
		{"a proxy's error keeps its status", []answer{{http.StatusBadGateway, "<html>bad gateway"}}, 3, "Bad Gateway (502)"},
		{"an oversized answer is refused", []answer{{http.StatusOK, strings.Repeat(" ", maxAnswerBytes-len(good)+1) + good}}, 1, "over 65536 bytes"},
		{"malformed XML is refused", []answer{{http.StatusOK, good[:len(good)/2]}}, 1, "not AssumeRole's XML"},
		{"an answer without a session token is refused", []answer{{http.StatusOK, without("SessionToken")}}, 1, "no SessionToken"},
		{"an answer without an expiration is refused", []answer{{http.StatusOK, without("Expiration")}}, 1, "no Expiration"},
		{"an expiration that is not a time is refused", []answer{{http.StatusOK, strings.Replace(good, "2019-11-09T13:34:41.359Z", "tomorrow", 1)}}, 1, `Expiration "tomorrow"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, reqs, _ := cannedSTS(t, tt.answers...)
			c, err := newAssumeRole(&cfg, testRole, "acme", "tenant-acme", time.Hour, "{}").Retrieve(t.Context())
			if n := len(reqs()); n != tt.calls {
				t.Errorf("%d calls, want %d", n, tt.calls)
			}
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "sts AssumeRole: ") {
					t.Errorf("Retrieve = %v, want an error naming %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := aws.Credentials{AccessKeyID: "ASIAIOSFODNN7EXAMPLE", SecretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY",
				SessionToken: c.SessionToken, Source: "tenantcreds", CanExpire: true,
				Expires: time.Date(2019, 11, 9, 13, 34, 41, 359e6, time.UTC), AccountID: "123456789012"}
			if diff := cmp.Diff(want, c); diff != "" || !strings.HasPrefix(c.SessionToken, "AQoDYXdzEPT") {
				t.Errorf("credentials mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAssumeRoleSendsASignedFormToTheRegionalEndpoint(t *testing.T) {
	cfg, reqs, forms := cannedSTS(t, answer{http.StatusOK, `<AssumeRoleResponse><AssumeRoleResult><Credentials><AccessKeyId>a</AccessKeyId>
		<SecretAccessKey>s</SecretAccessKey><SessionToken>t</SessionToken><Expiration>2030-01-01T00:00:00Z</Expiration></Credentials></AssumeRoleResult></AssumeRoleResponse>`})
	policy := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"dynamodb:GetItem","Resource":"*"}]}`
	if _, err := newAssumeRole(&cfg, testRole, "acme", "tenant-acme", 2*time.Hour, policy).Retrieve(t.Context()); err != nil {
		t.Fatal(err)
	}
	r, form := reqs()[0], forms()[0]
	want := url.Values{
		"Action": {"AssumeRole"}, "Version": {"2011-06-15"}, "RoleArn": {testRole}, "RoleSessionName": {"tenant-acme"},
		"DurationSeconds": {"7200"}, "Policy": {policy}, "Tags.member.1.Key": {"tenant"}, "Tags.member.1.Value": {"acme"},
	}
	if diff := cmp.Diff(want, form); diff != "" {
		t.Errorf("form mismatch (-want +got):\n%s", diff)
	}
	headers := []struct{ name, prefix string }{
		{"Content-Type", "application/x-www-form-urlencoded"},
		{"Authorization", "AWS4-HMAC-SHA256 Credential=AKIDFN/"},
		{"X-Amz-Date", time.Now().UTC().Format("20060102T")},
		{"X-Amz-Security-Token", "fn-token"},
	}
	for _, h := range headers {
		if got := r.Header.Get(h.name); !strings.HasPrefix(got, h.prefix) {
			t.Errorf("%s = %q, want it to begin %q", h.name, got, h.prefix)
		}
	}
	if auth := r.Header.Get("Authorization"); !strings.Contains(auth, "/eu-west-1/sts/aws4_request, SignedHeaders=") {
		t.Errorf("Authorization %q is not signed for sts in eu-west-1", auth)
	}
	if r.Method != http.MethodPost || r.URL.Path != "/" {
		t.Errorf("request %s %s, want POST /", r.Method, r.URL.Path)
	}
	regional := aws.Config{Region: "eu-west-1"}
	if got, want := newAssumeRole(&regional, testRole, "acme", "tenant-acme", time.Hour, policy).endpoint(), "https://sts.eu-west-1.amazonaws.com"; got != want {
		t.Errorf("endpoint %s, want STS's regional one %s", got, want)
	}
}

func TestAssumeRoleStopsAtTheCallsDeadline(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	cfg := aws.Config{Region: "eu-west-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.StaticCredentialsProvider{Value: aws.Credentials{AccessKeyID: "AKIDFN", SecretAccessKey: "s"}}}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := newAssumeRole(&cfg, testRole, "acme", "tenant-acme", time.Hour, "{}").Retrieve(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Retrieve = %v, want the deadline's error", err)
	}
	if waited := time.Since(start); waited > 5*time.Second {
		t.Errorf("Retrieve returned after %s, long past its deadline", waited)
	}
}

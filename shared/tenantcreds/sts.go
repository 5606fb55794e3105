package tenantcreds

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/switchboard-dev/switchboard/shared/awsjson"
)

// maxAnswerBytes bounds an answer of STS: an AssumeRole answer is about 2 KB
// (the session token is the longest part, under 1.5 KB for a packed policy
// at STS's limit).
const maxAnswerBytes = 64 << 10

// assumeRole is an aws.CredentialsProvider of one tenant's credentials: an
// AssumeRole call of STS's Query API (a signed form POST, answered in XML),
// made here rather than through the SDK's STS client, whose package
// initialisers every tool function would pay at each cold start (issue 11).
type assumeRole struct {
	cfg *aws.Config // the function's own credentials, region and endpoints
	// form is the call's body: the role, session name, duration, session
	// policy and tenant tag.
	form string
}

// newAssumeRole returns the provider of the credentials of role for tenant
// id, in the session named session, lasting duration, limited by policy.
func newAssumeRole(cfg *aws.Config, role, id, session string, duration time.Duration, policy string) *assumeRole {
	form := url.Values{
		"Action":              {"AssumeRole"},
		"Version":             {"2011-06-15"},
		"RoleArn":             {role},
		"RoleSessionName":     {session},
		"DurationSeconds":     {strconv.Itoa(int(duration / time.Second))},
		"Policy":              {policy},
		"Tags.member.1.Key":   {TagKey},
		"Tags.member.1.Value": {id},
	}
	return &assumeRole{cfg: cfg, form: form.Encode()}
}

// Retrieve implements [aws.CredentialsProvider]: it assumes the role,
// trying again ([awsjson.Retry]) after throttling, a server error or no
// answer.
func (a *assumeRole) Retrieve(ctx context.Context) (aws.Credentials, error) {
	var creds aws.Credentials
	err := awsjson.Retry(ctx, func() (retry bool, err error) {
		creds, retry, err = a.call(ctx)
		return retry, err
	})
	if err != nil {
		return aws.Credentials{}, fmt.Errorf("sts AssumeRole: %w", err)
	}
	return creds, nil
}

// call makes one AssumeRole call; retry reports whether its failure may
// pass if tried again.
func (a *assumeRole) call(ctx context.Context) (creds aws.Credentials, retry bool, err error) {
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, a.endpoint()+"/", strings.NewReader(a.form))
	if err != nil {
		return aws.Credentials{}, false, err
	}
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded") // as the SDK's client sends it
	status, answer, retry, err := awsjson.Send(ctx, a.cfg, "sts", r, []byte(a.form), maxAnswerBytes)
	if err != nil {
		return aws.Credentials{}, retry, err
	}
	if status/100 != 2 {
		e := parseError(status, answer)
		return aws.Credentials{}, awsjson.Retryable(status, e.Code), e
	}
	creds, err = parseCredentials(answer)
	return creds, false, err
}

// endpoint is STS's base URL: the one configured for it
// (AWS_ENDPOINT_URL_STS), else the region's, as the SDK's client has it
// (not the global https://sts.amazonaws.com, a single region's service).
func (a *assumeRole) endpoint() string {
	return awsjson.ServiceEndpoint(*a.cfg, "STS", "sts")
}

// parseError returns STS's error answer
// (<ErrorResponse><Error><Code/><Message/></Error></ErrorResponse>) as an
// [awsjson.Error]; an answer that is not one (a proxy's) keeps its status.
func parseError(status int, answer []byte) *awsjson.Error {
	var e struct {
		Code    string `xml:"Error>Code"`
		Message string `xml:"Error>Message"`
	}
	_ = xml.Unmarshal(answer, &e) // a proxy's error may not be XML; the status remains
	if e.Code == "" {
		e.Code = http.StatusText(status)
	}
	return &awsjson.Error{Code: e.Code, Status: status, Message: e.Message}
}

// parseCredentials returns the credentials of an AssumeRole answer, which
// must hold all four of their fields, and the account of the assumed role's
// ARN (as the SDK's provider gives it, for account-based endpoints).
func parseCredentials(answer []byte) (aws.Credentials, error) {
	var r struct {
		User  string `xml:"AssumeRoleResult>AssumedRoleUser>Arn"`
		Creds struct {
			AccessKeyID     string `xml:"AccessKeyId"`
			SecretAccessKey string
			SessionToken    string
			Expiration      string
		} `xml:"AssumeRoleResult>Credentials"`
	}
	if err := xml.Unmarshal(answer, &r); err != nil {
		return aws.Credentials{}, errors.New("the answer is not AssumeRole's XML")
	}
	c := r.Creds
	for _, f := range []struct{ name, value string }{
		{"AccessKeyId", c.AccessKeyID}, {"SecretAccessKey", c.SecretAccessKey}, {"SessionToken", c.SessionToken}, {"Expiration", c.Expiration},
	} {
		if f.value == "" {
			return aws.Credentials{}, fmt.Errorf("the answer has no %s", f.name)
		}
	}
	expires, err := time.Parse(time.RFC3339, c.Expiration)
	if err != nil {
		return aws.Credentials{}, fmt.Errorf("the answer's Expiration %q is not a time", c.Expiration)
	}
	var account string // arn:aws:sts::<account>:assumed-role/<role>/<session>
	if parts := strings.SplitN(r.User, ":", 6); len(parts) == 6 {
		account = parts[4]
	}
	return aws.Credentials{AccessKeyID: c.AccessKeyID, SecretAccessKey: c.SecretAccessKey, SessionToken: c.SessionToken,
		Source: "tenantcreds", CanExpire: true, Expires: expires, AccountID: account}, nil
}

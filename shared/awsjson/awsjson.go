// Package awsjson makes one signed request of an AWS API that speaks the
// JSON 1.0 or 1.1 protocol (POST / with X-Amz-Target <prefix>.<action>): the
// calls Switchboard makes of Secrets Manager, SSM Parameter Store, KMS,
// Step Functions and DynamoDB, signed with the SDK's Signature Version 4 signer,
// without linking those services' SDK clients, whose initialisation would
// cost every cold start of the functions that use them most of a
// millisecond (measured: +0.9 ms at p50 with Secrets Manager's client; 0.9
// ms of package initialisers with KMS's; issue 11).
//
//	var out struct{ Parameter struct{ Value string } }
//	retry, err := awsjson.Call(ctx, &cfg, awsjson.SSM, "GetParameter", map[string]any{"Name": name, "WithDecryption": true}, &out, 64<<10)
package awsjson

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// An API is an AWS service speaking JSON: its SDK ID (which names its
// endpoint override, AWS_ENDPOINT_URL_<SDK ID>), its signing name and
// endpoint prefix, and the prefix of its X-Amz-Target header.
type API struct {
	SDKID, SigningName, TargetPrefix string
	// Version is the protocol's, "1.0" or (if empty) "1.1".
	Version string
	// HostPrefix goes before the host of the service's regional endpoint
	// (not before an endpoint configured in its place): the host of the
	// operations that name one, such as StartSyncExecution's sync-.
	HostPrefix string
}

// The APIs Switchboard calls this way.
var (
	SecretsManager = API{SDKID: "Secrets Manager", SigningName: "secretsmanager", TargetPrefix: "secretsmanager"}
	SSM            = API{SDKID: "SSM", SigningName: "ssm", TargetPrefix: "AmazonSSM"}
	KMS            = API{SDKID: "KMS", SigningName: "kms", TargetPrefix: "TrentService"}
	// StepFunctionsSync is Step Functions for StartSyncExecution, which it
	// serves on its sync-states host.
	StepFunctionsSync = API{SDKID: "SFN", SigningName: "states", TargetPrefix: "AWSStepFunctions", Version: "1.0", HostPrefix: "sync-"}
	DynamoDB          = API{SDKID: "DynamoDB", SigningName: "dynamodb", TargetPrefix: "DynamoDB_20120810", Version: "1.0"}
)

// Error is a service's error answer: its error code (the __type's last
// part, such as ParameterNotFound), the HTTP status and the message.
type Error struct {
	Code    string
	Status  int
	Message string
	// Answer is the error answer's JSON, for the fields some errors add
	// (DynamoDB's CancellationReasons).
	Answer []byte
}

func (e *Error) Error() string {
	msg := e.Message
	if len(msg) > maxMessage {
		msg = msg[:maxMessage] + "..."
	}
	return fmt.Sprintf("%s (%d): %s", e.Code, e.Status, msg)
}

// maxMessage bounds the part of a service's error message an error's text
// carries: the answer it came in may be megabytes (a DynamoDB Query's).
const maxMessage = 1 << 10

// IsCode reports whether err is an [Error] with the code.
func IsCode(err error, code string) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

// Call makes one signed request of action with in as its JSON body,
// decoding the answer, of at most limit bytes, into out (if not nil). retry
// reports whether a failure may pass: throttling, a server error, no answer.
func Call(ctx context.Context, cfg *aws.Config, api API, action string, in, out any, limit int64) (retry bool, err error) {
	body, err := json.Marshal(in)
	if err != nil {
		return false, err
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, api.endpoint(cfg)+"/", bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	r.Header.Set("Content-Type", "application/x-amz-json-"+cmp.Or(api.Version, "1.1"))
	r.Header.Set("X-Amz-Target", api.TargetPrefix+"."+action)
	status, answer, retry, err := Send(ctx, cfg, api.SigningName, r, body, limit)
	if err != nil {
		if out == nil && status/100 == 2 && errors.Is(err, errTooLarge) {
			return false, nil // done; the answer, which no one reads, does not matter
		}
		return retry, err
	}
	if status/100 != 2 {
		var e struct {
			Type    string `json:"__type"`
			Message string `json:"message"`
		}
		_ = json.Unmarshal(answer, &e) // a proxy's error may not be JSON; the status remains
		// "prefix#Code", possibly followed by ":detail".
		code, _, _ := strings.Cut(e.Type[strings.LastIndex(e.Type, "#")+1:], ":")
		if code == "" {
			code = http.StatusText(status)
		}
		return Retryable(status, code), &Error{Code: code, Status: status, Message: e.Message, Answer: answer}
	}
	if out != nil {
		if err := json.Unmarshal(answer, out); err != nil {
			return false, fmt.Errorf("the answer is not %s's JSON", action)
		}
	}
	return false, nil
}

// Send signs r, whose body is body, for the service whose signing name is
// service, in cfg's region with cfg's credentials, sends it with cfg's HTTP
// client and returns the answer's status and body, of at most limit bytes:
// the transport of [Call] and of the packages that speak another of AWS's
// protocols (STS's Query API) without linking the service's SDK client.
// retry reports whether a failure to get the whole answer may pass if tried
// again.
func Send(ctx context.Context, cfg *aws.Config, service string, r *http.Request, body []byte, limit int64) (status int, answer []byte, retry bool, err error) {
	if cfg.Credentials == nil {
		return 0, nil, false, errors.New("no credentials")
	}
	creds, err := cfg.Credentials.Retrieve(ctx)
	if err != nil {
		return 0, nil, false, fmt.Errorf("retrieving credentials: %w", err)
	}
	sum := sha256.Sum256(body)
	if err := v4.NewSigner().SignHTTP(ctx, creds, r, hex.EncodeToString(sum[:]), service, cfg.Region, time.Now()); err != nil {
		return 0, nil, false, fmt.Errorf("signing: %w", err)
	}
	client := cfg.HTTPClient
	if client == nil {
		client = defaultClient()
	}
	resp, err := client.Do(r)
	if err != nil {
		return 0, nil, ctx.Err() == nil, err
	}
	defer resp.Body.Close()
	answer, err = io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		// After a success status the action was done (an execution ran):
		// doing it again is not a retry of the same outcome.
		return resp.StatusCode, nil, resp.StatusCode/100 != 2 && ctx.Err() == nil, err
	}
	if int64(len(answer)) > limit {
		return resp.StatusCode, nil, false, fmt.Errorf("%w: over %d bytes", errTooLarge, limit)
	}
	return resp.StatusCode, answer, false, nil
}

// errTooLarge is the error of an answer over its limit.
var errTooLarge = errors.New("the answer is too large")

// defaultClient sends the calls of a configuration without an HTTP client
// of its own: it keeps 10 idle connections per host, as the SDK's clients
// do, where http.DefaultClient keeps 2, so that a function writing in
// parallel does not open (and handshake) the others again. It is made on
// first use, not in every bootstrap's initialisation (cloning a transport
// sets up its HTTP/2 defaults).
var defaultClient = sync.OnceValue(func() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 10
	return &http.Client{Transport: tr}
})

// Retryable reports whether a call that failed with the HTTP status and the
// service's error code may pass if tried again, as the SDK's standard
// retryer has it: throttling, a server error, or one of [retryCodes].
func Retryable(status int, code string) bool {
	return status >= 500 || status == http.StatusTooManyRequests || strings.Contains(code, "Throttling") || retryCodes[code]
}

// retryCodes are the error codes, besides the throttling ones, of a call that
// may pass if tried again, as the SDK's standard retryer has them: DynamoDB's
// for a table or an account over its rate, and for an item a transaction is
// still writing.
var retryCodes = map[string]bool{
	"ProvisionedThroughputExceededException": true,
	"RequestLimitExceeded":                   true,
	"TransactionInProgressException":         true,
	"TooManyRequestsException":               true,
	"LimitExceededException":                 true,
}

// endpoint is the base URL of api as cfg configures it.
func (api API) endpoint(cfg *aws.Config) string {
	url := ServiceEndpoint(*cfg, api.SDKID, api.SigningName)
	if api.HostPrefix != "" && url == RegionalEndpoint(cfg.Region, api.SigningName) {
		return "https://" + api.HostPrefix + strings.TrimPrefix(url, "https://")
	}
	return url
}

// Attempts is how many times [Retry] tries a call.
const Attempts = 3

// Retry makes call up to [Attempts] times while it fails with retry set,
// waiting a random time of up to 100 ms, then up to 200 ms, between attempts
// (up to 1 s, then 2 s, after throttling: [backoff]), and returns its last
// error; if ctx ends while it waits, ctx's error, wrapping the last.
func Retry(ctx context.Context, call func() (retry bool, err error)) error {
	var err error
	for attempt := range Attempts {
		if attempt > 0 {
			wait := time.NewTimer(backoff(attempt, throttled(err)))
			select {
			case <-wait.C:
			case <-ctx.Done():
				wait.Stop()
				return fmt.Errorf("%w (after %w)", ctx.Err(), err) // a caller tells a deadline from the service's failure
			}
		}
		var retry bool
		if retry, err = call(); err == nil || !retry {
			return err
		}
	}
	return err
}

// backoff is the wait before retry number attempt (from 1): a uniformly
// random time below a base doubled for each earlier retry ("full jitter"),
// so that the many writers a throttled table turned away do not all come
// back at the same moment and collide again, as on a fixed schedule. The
// base is 100 ms, or 1 s after throttling, as the SDK's standard retryer
// waits for a throttled call: a service over its rate needs longer than a
// passing fault.
func backoff(attempt int, throttling bool) time.Duration {
	base := 100 * time.Millisecond
	if throttling {
		base = time.Second
	}
	return rand.N(base << (attempt - 1))
}

// throttled reports whether err is a service's answer that the caller is
// over a rate.
func throttled(err error) bool {
	var e *Error
	return errors.As(err, &e) && (e.Status == http.StatusTooManyRequests || strings.Contains(e.Code, "Throttling") || throttleCodes[e.Code])
}

// throttleCodes are the error codes of [retryCodes] that say the caller is
// over a rate.
var throttleCodes = map[string]bool{
	"ProvisionedThroughputExceededException": true,
	"RequestLimitExceeded":                   true,
	"TooManyRequestsException":               true,
	"LimitExceededException":                 true,
}

// ServiceEndpoint returns the base URL of the AWS service whose SDK id is
// sdkID ("Lambda", "Secrets Manager") and whose endpoint prefix is service
// ("lambda", "secretsmanager"), as cfg names it: an override of its
// configuration sources (the SDK's environment and shared configuration, and
// shared/config's Lambda configuration, give AWS_ENDPOINT_URL_<SERVICE> this way), else its
// BaseEndpoint, else the region's standard endpoint. For the packages that
// make the one call they need themselves rather than link the SDK's client.
func ServiceEndpoint(cfg aws.Config, sdkID, service string) string {
	for _, src := range cfg.ConfigSources {
		if p, ok := src.(interface {
			GetServiceBaseEndpoint(ctx context.Context, sdkID string) (string, bool, error)
		}); ok {
			if url, found, err := p.GetServiceBaseEndpoint(context.Background(), sdkID); err == nil && found {
				return strings.TrimSuffix(url, "/")
			}
		}
	}
	if cfg.BaseEndpoint != nil {
		return strings.TrimSuffix(*cfg.BaseEndpoint, "/")
	}
	return RegionalEndpoint(cfg.Region, service)
}

// RegionalEndpoint returns the standard endpoint in region of the service
// whose endpoint prefix is service: https://<service>.<region>.amazonaws.com.
func RegionalEndpoint(region, service string) string {
	suffix := "amazonaws.com"
	if strings.HasPrefix(region, "cn-") {
		suffix = "amazonaws.com.cn"
	}
	return "https://" + service + "." + region + "." + suffix
}

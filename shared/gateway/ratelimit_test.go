package gateway_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/apikey"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/gateway"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/invoke/lambdaapi"
	"github.com/switchboard-dev/switchboard/shared/metrics"
	"github.com/switchboard-dev/switchboard/shared/ratelimit"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
)

func TestRateLimitsAreTheDefaultsUnlessSetOrOff(t *testing.T) {
	cat := catalog.Default()
	withShares := ratelimit.Shares(cat, ratelimit.DefaultLimits)
	slower := withShares
	slower.PrincipalRate = ratelimit.Rate{PerSecond: 2, Burst: 20}
	noRagShare := ratelimit.Shares(cat, ratelimit.DefaultLimits)
	noRagShare.Shares["rag/basic"] = 0
	for _, tc := range []struct {
		name, spec string
		want       ratelimit.Limits
		wantOn     bool
	}{
		{"NothingSetIsTheDefaultsWithTheCatalogsShares", "", withShares, true},
		{"ASpecChangesTheDefaults", "principal_rate=2", slower, true},
		{"AShareSetStaysAsSet", "share.rag/basic=0", noRagShare, true},
		{"OffIsOff", config.RateLimitsOff, ratelimit.Limits{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, on, err := ratelimit.Configured(tc.spec, cat)
			if err != nil || on != tc.wantOn {
				t.Fatalf("RateLimits(%q) on %v, error %v; want on %v", tc.spec, on, err, tc.wantOn)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("RateLimits(%q) mismatch (-want +got):\n%s", tc.spec, diff)
			}
		})
	}
	if _, _, err := ratelimit.Configured("tenant_speed=5", cat); err == nil || !strings.Contains(err.Error(), "tenant_speed") {
		t.Errorf("an unknown limit: %v, want an error naming it", err)
	}
}

// reservedLambda is a server speaking the Lambda Invoke API whose functions
// each have a reserved concurrency of `reserved`, shared by every tenant: an
// invocation past it is throttled at once (429 TooManyRequestsException),
// as Lambda does. Each call takes `took` and succeeds.
func reservedLambda(t *testing.T, reserved int, took time.Duration) string {
	var mu sync.Mutex
	running := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		fn := r.URL.Path
		mu.Lock()
		if running[fn] >= reserved {
			mu.Unlock()
			w.Header().Set("X-Amzn-ErrorType", "TooManyRequestsException")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"Reason":"ReservedFunctionConcurrentInvocationLimitExceeded","message":"Rate Exceeded."}`)
			return
		}
		running[fn]++
		mu.Unlock()
		time.Sleep(took)
		mu.Lock()
		running[fn]--
		mu.Unlock()
		fmt.Fprint(w, `{"result":{"_meta":{"`+invoke.TraceMetaKey+`":"t"},"content":[{"type":"text","text":"{}"}],"structuredContent":{}}}`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// countingLambda is a reservedLambda without a limit that tells seen the
// path of each invocation before answering it.
func countingLambda(t *testing.T, seen func(path string)) *httptest.Server {
	answering := reservedLambda(t, 100, 0)
	lambda := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen(r.URL.Path)
		resp, err := http.Post(answering+r.URL.Path, "application/json", r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}))
	t.Cleanup(lambda.Close)
	return lambda
}

// limitedGateway serves the catalog through a Lambda API at lambdaURL,
// invoked once per call (no retries, so a throttle shows), with limits if
// not nil, and returns its URL and a way to create keys.
func limitedGateway(t *testing.T, lambdaURL string, limits *ratelimit.Limits) (string, *apikey.Keys) {
	return measuredGateway(t, lambdaURL, limits, nil)
}

// measuredGateway is limitedGateway writing its metric records to m.
func measuredGateway(t *testing.T, lambdaURL string, limits *ratelimit.Limits, m *metrics.Emitter) (string, *apikey.Keys) {
	tbl := storetest.OpenEmbedded(t)
	keys := apikey.New(tbl, nil)
	opts := gateway.Options{
		Catalog: catalog.Default(),
		Invoker: lambdaapi.New(aws.Config{
			Region: "us-east-1", BaseEndpoint: aws.String(lambdaURL), RetryMaxAttempts: 1,
			Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", ""),
		}, "sb-"),
		Keys:    keys,
		Metrics: m,
	}
	if limits != nil {
		opts.Limiter = ratelimit.New(tbl, &ratelimit.Options{Defaults: limits})
	}
	gw, err := gateway.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gw.Handler())
	t.Cleanup(srv.Close)
	return srv.URL, keys
}

// callBody is a tools/call of tool; sdkPath adds a _meta key the fast path
// leaves to the go-sdk, so that the go-sdk's tool handler answers it.
func callBody(tool string, sdkPath bool) string {
	meta := ""
	if sdkPath {
		meta = `,"_meta":{"switchboard.test/path":"go-sdk"}`
	}
	return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + tool + `","arguments":{"question":"q","store_id":"s"}` + meta + `}}`
}

// rawCall posts body to the gateway with key (if any) and returns the answer's body.
func rawCall(ctx context.Context, url, key, body string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/mcp", strings.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return string(b), fmt.Errorf("status %d", resp.StatusCode)
	}
	return string(b), err
}

// isToolError reports whether an answer to a tools/call is a tool error.
func isToolError(answer string) bool { return strings.Contains(answer, `"isError":true`) }

// Issue 13 measured a tenant flooding rag_basic making 22 of another
// tenant's 60 calls fail, because the pipelines' reserved concurrency is
// shared by every tenant. Through the gateway, with each tenant held to its
// share of the function (half its reserved concurrency of 5, so 2), none of
// B's calls may fail; without limits the same run must fail some, or the
// test proves nothing.
func TestAFloodingTenantCannotMakeAnothersCallsFailThroughTheGateway(t *testing.T) {
	lambdaURL := reservedLambda(t, catalog.Default().ReservedConcurrency("rag/basic"), 20*time.Millisecond)
	limits := ratelimit.DefaultLimits
	limits.TenantRate, limits.PrincipalRate = ratelimit.Rate{}, ratelimit.Rate{} // only the flood's calls in flight should meet a limit
	limits = ratelimit.Shares(catalog.Default(), limits)
	if got := limits.Shares["rag/basic"]; got != 2 {
		t.Fatalf("rag/basic's share is %d, want 2 (half its reserved concurrency of 5)", got)
	}
	run := func(limits *ratelimit.Limits) (failedB int, servedA, refusedA int64, refusal string) {
		url, keys := limitedGateway(t, lambdaURL, limits)
		keyA, _, err := keys.Create(context.Background(), "flooder", "a", nil, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		keyB, _, err := keys.Create(context.Background(), "patient", "b", nil, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		ctx, stop := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		var served, refused atomic.Int64
		var firstRefusal atomic.Value
		for range 16 {
			wg.Go(func() {
				for ctx.Err() == nil {
					answer, err := rawCall(ctx, url, keyA, callBody("rag_basic", false))
					switch {
					case err != nil:
					case isToolError(answer):
						refused.Add(1)
						firstRefusal.CompareAndSwap(nil, answer)
						time.Sleep(time.Millisecond)
					default:
						served.Add(1)
					}
				}
			})
		}
		time.Sleep(50 * time.Millisecond) // the flood is under way
		for i := range 60 {
			answer, err := rawCall(context.Background(), url, keyB, callBody("rag_basic", i%2 == 1))
			if err != nil || isToolError(answer) {
				failedB++
			}
		}
		stop()
		wg.Wait()
		r, _ := firstRefusal.Load().(string)
		return failedB, served.Load(), refused.Load(), r
	}
	failed, served, refused, _ := run(nil)
	t.Logf("without limits: B failed %d of 60; A served %d, refused %d", failed, served, refused)
	if failed == 0 {
		t.Fatal("without limits none of B's calls failed: the flood does not reproduce the issue, so the test proves nothing")
	}
	failed, served, refused, refusal := run(&limits)
	t.Logf("with limits: B failed %d of 60; A served %d, refused %d", failed, served, refused)
	if failed != 0 {
		t.Errorf("with limits %d of B's 60 calls failed, want none", failed)
	}
	if served == 0 || refused == 0 {
		t.Errorf("A served %d, refused %d: want both", served, refused)
	}
	if !strings.Contains(refusal, "function share reached") || !strings.Contains(refusal, "retry after") {
		t.Errorf("A's refusal %q does not name the limit and when to retry", refusal)
	}
}

// A call over its tenant's rate is refused before its function runs, on
// the fast path and the go-sdk's alike, with a tool error saying which
// limit it met and when to retry.
func TestARefusedCallSaysWhenToRetry(t *testing.T) {
	var invoked atomic.Int64
	lambda := countingLambda(t, func(string) { invoked.Add(1) })
	limits, err := ratelimit.ParseLimits("tenant_rate=1/min tenant_burst=1", ratelimit.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	var records lockedBuffer
	url, keys := measuredGateway(t, lambda.URL, &limits, metrics.New(&records))
	for _, tc := range []struct {
		name    string
		sdkPath bool
	}{
		{"OnTheFastPath", false},
		{"OnTheGoSDKsPath", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key, _, err := keys.Create(context.Background(), "t-"+strings.ToLower(tc.name), "p", nil, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			if answer, err := rawCall(context.Background(), url, key, callBody("memory_get_context", tc.sdkPath)); err != nil || isToolError(answer) {
				t.Fatalf("the first call, within the burst: %v %s", err, answer)
			}
			before := invoked.Load()
			answer, err := rawCall(context.Background(), url, key, callBody("memory_get_context", tc.sdkPath))
			if err != nil || !isToolError(answer) {
				t.Fatalf("the second call within a minute: %v %s, want a tool error", err, answer)
			}
			for _, want := range []string{"tenant rate limit reached", `"id":7`} {
				if !strings.Contains(answer, want) {
					t.Errorf("refusal %s does not say %q", answer, want)
				}
			}
			// The token comes back a minute after the first call, less the
			// time the calls took (a tenth of a second or more under load).
			if m := retryAfter.FindStringSubmatch(answer); m == nil {
				t.Errorf("refusal %s does not say when to retry", answer)
			} else if s, _ := strconv.ParseFloat(m[1], 64); s < 50 || s > 60 {
				t.Errorf("refusal %s says to retry after %v s, want within the minute's last ten seconds", answer, s)
			}
			if n := invoked.Load() - before; n != 0 {
				t.Errorf("the refused call invoked its function %d times", n)
			}
			// The refusal is a throttle of the tool's family, recorded by the
			// gateway since the function did not run.
			last := records.lastLine()
			for _, want := range []string{`"Family":"memory"`, `"Function":"memory_get_context"`, `"Throttles":1`, `"ErrorKind":"rate_limited"`, `"tenant":"t-` + strings.ToLower(tc.name)} {
				if !strings.Contains(last, want) {
					t.Errorf("metric record %s lacks %s", last, want)
				}
			}
		})
	}
}

// retryAfter finds the seconds a refusal says to wait.
var retryAfter = regexp.MustCompile(`retry after (\d+\.\d) s`)

// lockedBuffer is a writer safe for concurrent use.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// lastLine returns the last line written.
func (b *lockedBuffer) lastLine() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(b.buf.String()), "\n")
	return lines[len(lines)-1]
}

// The lists a host reads, whose connectors' part the gateway asks the proxy
// function for, are not calls the limits count: a tenant allowed one call a
// minute lists three times and still makes its call.
func TestListsDoNotSpendTheCallersRate(t *testing.T) {
	var listings atomic.Int64
	lambda := countingLambda(t, func(path string) {
		if strings.Contains(path, "proxy") {
			listings.Add(1)
		}
	})
	limits, err := ratelimit.ParseLimits("tenant_rate=1/min tenant_burst=1", ratelimit.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	url, keys := limitedGateway(t, lambda.URL, &limits)
	key, _, err := keys.Create(context.Background(), "lister", "p", nil, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		answer, err := rawCall(context.Background(), url, key, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		if err != nil || !strings.Contains(answer, `"memory_get_context"`) {
			t.Fatalf("tools/list %d: %v %.300s", i+1, err, answer)
		}
	}
	if listings.Load() == 0 {
		t.Fatal("no list asked the proxy function for the connectors' tools: this test checks nothing")
	}
	if answer, err := rawCall(context.Background(), url, key, callBody("memory_get_context", false)); err != nil || isToolError(answer) {
		t.Errorf("the one call the rate allows, after three lists: %v %s", err, answer)
	}
}

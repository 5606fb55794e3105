package deploy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/config/secrets/secretstest"
	"github.com/switchboard-dev/switchboard/shared/elicit"
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/handlers/assistantfn"
	"github.com/switchboard-dev/switchboard/shared/handlers/careerfn"
	"github.com/switchboard-dev/switchboard/shared/handlers/chatfn"
	"github.com/switchboard-dev/switchboard/shared/handlers/connectorfn"
	"github.com/switchboard-dev/switchboard/shared/handlers/memoryfn"
	"github.com/switchboard-dev/switchboard/shared/handlers/operationsfn"
	"github.com/switchboard-dev/switchboard/shared/handlers/ragfn"
	"github.com/switchboard-dev/switchboard/shared/handlers/ragstorefn"
	"github.com/switchboard-dev/switchboard/shared/handlers/vectorfn"
	"github.com/switchboard-dev/switchboard/shared/handlers/websearchfn"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/lambdatest"
	"github.com/switchboard-dev/switchboard/shared/later"
	"github.com/switchboard-dev/switchboard/shared/local"
	"github.com/switchboard-dev/switchboard/shared/pipeline"
	"github.com/switchboard-dev/switchboard/shared/pipeline/stepfunctions"
	"github.com/switchboard-dev/switchboard/shared/shutdown"
)

// buildFlags are the flags of LambdaBuild, which every bootstrap is built with.
var buildFlags = []string{"-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w"}

// goTool returns the go command that runs these tests: go test puts its own
// GOROOT/bin first on the PATH of the tests it runs (since Go 1.19).
func goTool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build the functions: %v", err)
	}
	return p
}

// withoutRace drops -race from goflags: the bootstraps are built without cgo,
// as Lambda runs them, and the race detector needs it.
func withoutRace(goflags string) string {
	var keep []string
	for _, f := range strings.Fields(goflags) {
		if f != "-race" && f != "-race=true" {
			keep = append(keep, f)
		}
	}
	return strings.Join(keep, " ")
}

// buildBootstraps builds every function under functions/ for goos/goarch
// with the Lambda flags into dir/<path>/bootstrap, returning the binaries by
// function path. It compiles all packages in one go command first, so that
// the per-function builds that follow, run in parallel up to the number of
// CPUs, only link.
func buildBootstraps(t *testing.T, dir, goos, goarch string) map[string]string {
	t.Helper()
	gocmd := goTool(t)
	run := func(args ...string) error {
		cmd := exec.Command(gocmd, args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch, "GOFLAGS="+withoutRace(os.Getenv("GOFLAGS")))
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	fns := Functions(catalog.Default())
	pkgs := make([]string, len(fns))
	for i, f := range fns {
		pkgs[i] = "./functions/" + f.Path
	}
	// go list -export compiles every package the functions need, using all
	// CPUs, without linking; the builds below then share its cache.
	if err := run(append([]string{"list", "-export", "-tags", "lambda.norpc", "-trimpath", "-f", "{{.ImportPath}}"}, pkgs...)...); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	var mu sync.Mutex
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	t.Run(goos+"_"+goarch, func(t *testing.T) {
		for _, f := range fns {
			t.Run(f.Path, func(t *testing.T) {
				t.Parallel()
				sem <- struct{}{}
				defer func() { <-sem }()
				bin := filepath.Join(dir, filepath.FromSlash(f.Path), "bootstrap")
				if err := run(append(append([]string{"build"}, buildFlags...), "-o", bin, "./functions/"+f.Path)...); err != nil {
					t.Fatal(err)
				}
				info, err := os.Stat(bin)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("%s/%s bootstrap: %.1f MB", goos, goarch, float64(info.Size())/(1<<20))
				mu.Lock()
				out[f.Path] = bin
				mu.Unlock()
			})
		}
	})
	if t.Failed() {
		t.FailNow()
	}
	return out
}

func TestEveryFunctionBuildsForLinuxArm64(t *testing.T) {
	bins := buildBootstraps(t, t.TempDir(), "linux", "arm64")
	for path, bin := range bins {
		b := make([]byte, 20)
		f, err := os.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		_, err = io.ReadFull(f, b)
		f.Close()
		// An ELF file whose e_machine (bytes 18-19, little-endian) is EM_AARCH64 (183).
		if err != nil || string(b[:4]) != "\x7fELF" || b[18] != 183 || b[19] != 0 {
			t.Errorf("%s: bootstrap is not a linux/arm64 ELF executable", path)
		}
	}
}

// fakeLambda serves the Lambda Invoke API (POST
// /2015-03-31/functions/{name}/invocations) for the functions named
// prefix+FunctionName(path), answering each with its handler in process, as
// Lambda would run it. It records the envelopes it receives.
type fakeLambda struct {
	t      *testing.T
	prefix string
	stack  *local.Stack
	mu     sync.Mutex
	calls  []fakeCall
}

type fakeCall struct {
	Function string
	Request  invoke.Request
}

func (f *fakeLambda) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	var path string
	for _, fn := range handlers.All() {
		if f.prefix+invoke.FunctionName(fn.Path) == name {
			path = fn.Path
		}
	}
	body, _ := io.ReadAll(r.Body)
	if path == "" {
		w.Header().Set("X-Amzn-ErrorType", "ResourceNotFoundException")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"Type":"User","message":"Function not found: %s"}`, name)
		return
	}
	var req invoke.Request
	if err := json.Unmarshal(body, &req); err != nil {
		f.t.Errorf("the gateway sent %s a payload that is not an envelope: %v", name, err)
	}
	f.mu.Lock()
	f.calls = append(f.calls, fakeCall{Function: name, Request: req})
	f.mu.Unlock()
	h, _ := f.stack.Handler(path)
	out, err := h.Invoke(r.Context(), body)
	w.Header().Set("X-Amz-Executed-Version", "$LATEST")
	if err != nil {
		w.Header().Set("X-Amz-Function-Error", "Unhandled")
		json.NewEncoder(w).Encode(map[string]string{"errorMessage": err.Error(), "errorType": "Error"})
		return
	}
	w.Write(out)
}

// awsEnv is the environment of a function process: a Lambda-like one, with
// dummy credentials and no shared AWS configuration.
func awsEnv(t *testing.T, name string) []string {
	return []string{
		"HOME=" + t.TempDir(),
		"AWS_LAMBDA_FUNCTION_NAME=" + name,
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE=256",
		"AWS_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=AKIDLAMBDATEST",
		"AWS_SECRET_ACCESS_KEY=lambdatest",
		"AWS_EC2_METADATA_DISABLED=true",
		"AWS_CONFIG_FILE=" + os.DevNull,
		"AWS_SHARED_CREDENTIALS_FILE=" + os.DevNull,
	}
}

// TestEveryBootstrapAnswersItsSampleEvents builds every function for this
// machine with the Lambda flags, runs each bootstrap against an in-process
// Lambda Runtime API, and feeds it its sample events. The gateway invokes the
// tool functions through the Lambda API, served here by fakeLambda.
func TestEveryBootstrapAnswersItsSampleEvents(t *testing.T) {
	bins := buildBootstraps(t, t.TempDir(), runtime.GOOS, runtime.GOARCH)
	evs, err := Events(catalog.Default())
	if err != nil {
		t.Fatal(err)
	}
	byFunction := map[string][]Event{}
	for _, ev := range evs {
		byFunction[ev.Function] = append(byFunction[ev.Function], ev)
	}
	const prefix = "switchboard-test-"
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for _, f := range Functions(catalog.Default()) {
		t.Run(f.Path, func(t *testing.T) {
			t.Parallel()
			sem <- struct{}{}
			defer func() { <-sem }()
			dir := t.TempDir()
			env := append(awsEnv(t, prefix+f.Name), config.EnvTable+"="+config.FilePrefix+filepath.Join(dir, "t.db"), blobsEnv(dir))
			if f.Connects {
				env = append(env, config.EnvConnectorKey+"="+config.FilePrefix+filepath.Join(dir, "connector-keys.json"),
					config.EnvConnectorAllowedHosts+"="+SampleConnectorHost)
			}
			if f.Searches {
				env = append(env, sampleSearchEnv(t, dir)...)
			}
			var lam *fakeLambda
			var keys *secretstest.Server
			if f.Path == GatewayPath {
				// The tool functions the gateway invokes run in this process, on their own table.
				tbl, blobs := openTable(t, filepath.Join(dir, "functions.db")), openBlobs(t, filepath.Join(dir, "functions"))
				seed(t, tbl, blobs)
				lam = &fakeLambda{t: t, prefix: prefix, stack: stack(t, tbl, blobs)}
				mux := http.NewServeMux()
				mux.Handle("POST /2015-03-31/functions/{name}/invocations", lam)
				srv := httptest.NewServer(mux)
				t.Cleanup(srv.Close)
				// The request-state keys are read from Secrets Manager, as deployed.
				keys = secretstest.New(t, map[string]string{secretstest.ARN("request-state-keys"): `{"k1":"` + elicit.NewSecret() + `"}`})
				env = append(env,
					config.EnvFunctionPrefix+"="+prefix,
					config.EnvAnonymousTenant+"="+SampleTenant,
					config.EnvRequestStateKeys+"="+secretstest.ARN("request-state-keys"),
					"AWS_ENDPOINT_URL_LAMBDA="+srv.URL,
					"AWS_ENDPOINT_URL_SECRETS_MANAGER="+keys.URL,
				)
			} else {
				tbl := openTable(t, filepath.Join(dir, "t.db"))
				seed(t, tbl, openBlobs(t, dir))
				tbl.Close() // the bootstrap opens it; the embedded store allows one process at a time
			}
			if f.Pipeline {
				env = append(env, stateMachine(t, filepath.Join(dir, "steps"))...)
			}
			// Each invocation's deadline is the function's timeout, as on Lambda.
			rt := lambdatest.NewRuntime(&lambdatest.Options{FunctionARN: "arn:aws:lambda:us-east-1:123456789012:function:" + prefix + f.Name, Timeout: f.Limits.Timeout})
			defer rt.Close()
			p, err := lambdatest.Start(rt, bins[f.Path], env)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := p.Stop(); err != nil {
					t.Errorf("the bootstrap exited by itself: %v\n%s", err, p.Output())
				}
			}()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			for _, ev := range byFunction[f.Path] {
				res, err := p.Invoke(ctx, readEvent(t, ev))
				if err != nil {
					t.Fatalf("%s: %v", ev.Path, err)
				}
				if res.Error != nil {
					t.Fatalf("%s: function error %v\n%s", ev.Path, res.Error, p.Output())
				}
				checkAnswer(t, ev, res.Payload)
				t.Logf("%s answered in %v", ev.Path, res.Answered.Sub(res.Received).Round(time.Microsecond))
			}
			registered := rt.Registered()
			slices.Sort(registered)
			if diff := cmp.Diff(extensions(t, f.Path), registered); diff != "" {
				t.Errorf("the extensions the bootstrap registered mismatch (-want +got):\n%s", diff)
			}
			if keys != nil {
				if diff := cmp.Diff([]string{secretstest.ARN("request-state-keys")}, keys.Reads()); diff != "" {
					t.Errorf("the gateway's reads of its request-state keys mismatch (-want +got):\n%s", diff)
				}
			}
			if lam != nil {
				call := eventByPath(t, EventsDir+"/"+GatewayPath+"/tools-call.json")
				tl, ok := catalog.Default().Tool(call.Name)
				if !ok {
					t.Fatalf("%s calls %q, which the catalog lacks", call.Path, call.Name)
				}
				want := prefix + invoke.FunctionName(tl.Function)
				// tools/list also asks the connectors' proxy function what
				// the tenant's connectors offer.
				var calls, listings []fakeCall
				for _, c := range lam.calls {
					if c.Request.Tool == catalog.ConnectorListingTool {
						listings = append(listings, c)
					} else {
						calls = append(calls, c)
					}
				}
				if len(calls) != 1 || calls[0].Function != want ||
					calls[0].Request.Caller.Tenant != SampleTenant || calls[0].Request.Tool != tl.Name {
					t.Errorf("Lambda Invoke calls = %+v, want one to %s calling %s for tenant %s", calls, want, tl.Name, SampleTenant)
				}
				if len(listings) != 1 || listings[0].Function != prefix+invoke.FunctionName(catalog.ConnectorProxyFunction) {
					t.Errorf("Lambda Invoke calls of %s = %+v, want one, by tools/list", catalog.ConnectorListingTool, listings)
				}
			}
		})
	}
}

// stateMachine serves the Step Functions API for a pipeline tool's
// bootstrap, as the deployed state machine runs: the same definition,
// interpreted in this process over every function on their own table and
// blobs under dir, seeded as the bootstrap's are. It returns the
// bootstrap's environment that points it there.
func stateMachine(t *testing.T, dir string) []string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	tbl, blobs := openTable(t, filepath.Join(dir, "t.db")), openBlobs(t, dir)
	seed(t, tbl, blobs)
	machine, err := pipeline.NewLocal(catalog.Default(), stack(t, tbl, blobs))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(stepfunctions.Handler(machine.Execute))
	t.Cleanup(srv.Close)
	return []string{config.EnvPipelineARN + "=arn:aws:states:us-east-1:123456789012:stateMachine:switchboard-test-pipeline", "AWS_ENDPOINT_URL_SFN=" + srv.URL}
}

// linked returns what each bootstrap links: the packages it depends on, by
// function path, as -tags lambda.norpc builds them.
func linked(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command(goTool(t), "list", "-tags", "lambda.norpc", "-f", "{{.ImportPath}} {{join .Deps \" \"}}", "./functions/...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		path, _ := strings.CutPrefix(fields[0], module+"functions/")
		deps[path] = fields[1:]
	}
	return deps
}

const module = "github.com/switchboard-dev/switchboard/"

// awsService returns the AWS service client pkg is, if it is one.
func awsService(pkg string) (string, bool) {
	name, ok := strings.CutPrefix(pkg, "github.com/aws/aws-sdk-go-v2/service/")
	if !ok || strings.Contains(name, "/") {
		return "", false
	}
	return name, true
}

// Every package a bootstrap links runs its initialisers at each cold start
// (an AWS service client costs a millisecond or more): each function may link
// its own family's code and the clients its catalog entry says it uses, and
// nothing else. These are the packages of this module and the AWS clients
// every tool function may link.
var (
	// Every tool function: starting (lambdafn, coldstart, config with the
	// DynamoDB or embedded table, DynamoDB called through awsjson), the envelope (invoke, read with rawjson,
	// and the tool profile it may carry: profile)
	// and the catalog, audit events, the round of a call that may ask the
	// client for input (elicit, which reads its key files with keyfile), and the types lambdafn's Deps name (the
	// pipeline's runner, the providers, with the named prompts their
	// default texts come from). None links the SDK's default
	// configuration, whose SSO clients and credential chain Lambda never
	// needs (config.lambdaAWS).
	everyTool = []string{"infra", "shared/audit", "shared/awsjson", "shared/callcontext", "shared/catalog", "shared/coldstart", "shared/config",
		"shared/elicit", "shared/fault", "shared/invoke", "shared/keyfile", "shared/lambdafn", "shared/later", "shared/metrics", "shared/pipeline", "shared/profile", "shared/provider", "shared/provider/offline", "shared/provider/multivector", "shared/prompt", "shared/quota",
		"shared/ratelimit", "shared/rawjson", "shared/shutdown", "shared/statemachine", "shared/store", "shared/store/dynamo", "shared/store/embedded", "shared/tenant", "shared/text",
		// Every tool function reaches the table, and with a tenant role
		// configured does so as each call's tenant: it assumes the role
		// through STS's Query API (config/tenantscoped, tenantcreds), with
		// no SDK client. quota is lambdafn's Deps.Quotas, ratelimit its
		// Deps.Limiter (the chat's tool calls).
		"shared/config/tenantscoped", "shared/tenantcreds"}
	// The gateway keeps its own role (the _apikeys partition belongs to no
	// tenant): no STS. It reads the OAuth facade's signing keys from
	// Secrets Manager at cold start with config/secrets, which needs no SDK
	// client, and calls DynamoDB through awsjson: no SDK client at all.
	gatewayClients []string
	// The key rings' custom resource function (KeyStore ssm): its SSM calls
	// (awsjson, no SDK client) and the AWS configuration of package config,
	// with what config links.
	keyringCode = []string{"shared/keyring", "shared/awsjson", "shared/keyfile", "shared/config", "shared/elicit", "shared/fault",
		"shared/store", "shared/store/dynamo", "shared/store/embedded", "shared/tenant"}
	// The domain code each family's bindings may link. A pipeline tool's
	// function drives the state machine and links none of its steps' code:
	// neither the retriever's bindings nor package local.
	familyCode = map[string][]string{
		"shared/handlers/memoryfn":     {"shared/memory"},
		"shared/handlers/operationsfn": nil,
		// The vector functions link late interaction's codec: compaction
		// merges token shards beside chunk shards.
		// The retriever and the rephrase step read their thread's settings.
		"shared/handlers/vectorfn": {"shared/vector", "shared/vector/query", "shared/vector/remote", "shared/retrieval", "shared/binread", "shared/graph", "shared/document", "shared/colbert", "shared/settings", "shared/vector/alias"},
		// The pipeline tools name the stores' search types (vector/query)
		// and link none of the stores' code: not vector, nor document nor
		// colbert; graph (with retrieval's analyser) is global search's.
		"shared/handlers/ragfn": {"shared/rag", "shared/memory", "shared/vector/query", "shared/retrieval", "shared/binread", "shared/graph", "shared/settings", "shared/vector/alias"},
		// The RAG tools that read the stores themselves link their code.
		"shared/handlers/ragstorefn": {"shared/handlers/ragfn", "shared/rag", "shared/memory", "shared/vector", "shared/vector/query", "shared/retrieval", "shared/binread", "shared/graph",
			"shared/document", "shared/colbert", "shared/settings", "shared/vector/alias"},
		"shared/handlers/careerfn":    {"shared/career", "shared/retrieval", "shared/binread", "shared/document"},
		"shared/handlers/connectorfn": {"shared/connector"},
		// The chat reads and records its thread through the memory family, and
		// reads its settings and prompts.
		"shared/handlers/chatfn":      {"shared/chat", "shared/memory", "shared/prompt", "shared/settings", "shared/vector/alias"},
		"shared/handlers/assistantfn": {"shared/settings", "shared/vector/alias"},
	}
	// What the openers of package config link, and the catalog facts that
	// call for each. No function links the SDK's Lambda client: package
	// invoke/lambdaapi makes the one call it needs itself.
	blobsCode = []string{"shared/config/blobs", "shared/store/localfs", "shared/store/s3"}
	// The providers' API keys come from Secrets Manager (config/secrets).
	providersCode = []string{"shared/config/providers", "shared/config/secrets", "shared/awsjson", "shared/provider/bedrock", "shared/provider/openai", "shared/provider/jina"}
	// The pipeline's runner: StartSyncExecution through awsjson, no SDK client.
	pipelineCode = []string{"shared/config/stepfunctions", "shared/pipeline/stepfunctions", "shared/awsjson"}
	invokerCode  = []string{"shared/config/invoker", "shared/invoke/lambdaapi"}
	// The connector functions' sealer (a KMS key, called through awsjson
	// with no SDK client, or a local key file) and outbound guard.
	connectorsCode = []string{"shared/config/connectors", "shared/config/secrets", "shared/awsjson", "shared/netguard", "shared/seal", "shared/seal/kms", "shared/seal/localkey"}
	// The web search functions' backends, each request through the outbound
	// guard, the tenants' rate bucket, and the Brave key's secret.
	searchCode = []string{"shared/config/search", "shared/config/secrets", "shared/awsjson", "shared/netguard", "shared/ratelimit", "shared/websearch",
		"shared/websearch/brave", "shared/websearch/duckduckgo", "shared/websearch/searxng"}
	// The deployed gateway: the catalog, the gateway (its tools/call fast
	// path reads requests with rawjson), API keys and rate limits on the table, request
	// states (elicit), and the Lambda Invoke API to invoke the tools
	// (invoke/lambdaapi, which needs no SDK client, and callcontext, for the
	// X-Ray trace it carries on); the approval page; its metric records;
	// provider and signing-key secrets (config/secrets); tool profiles and
	// tool_search.
	gatewayCode = []string{"shared/apigw", "shared/apikey", "shared/approvalpage", "shared/callcontext", "shared/catalog", "shared/coldstart", "shared/config", "shared/config/invoker",
		"shared/config/authz", "shared/config/secrets", "shared/awsjson", "shared/elicit", "shared/fault", "shared/gateway", "shared/netguard", "shared/oauth", "shared/invoke", "shared/invoke/lambdaapi", "shared/keyfile", "shared/launch/lambdagateway",
		"shared/metrics", "shared/prompt", "shared/ratelimit", "shared/rawjson", "shared/store", "shared/store/dynamo", "shared/store/embedded", "shared/tenant",
		// Tool profiles, and tool_search's ranking: BM25 over package text's
		// analyser, and the provider interfaces (no provider's client).
		"shared/profile", "shared/toolsearch", "shared/text", "shared/provider"}
)

// allowed returns the packages of this module and the AWS clients the
// bootstrap of f may link, given the bindings that serve it.
func allowed(f catalog.Function, binding string) (code, clients []string) {
	code = append(slices.Clone(everyTool), binding)
	code = append(code, familyCode[binding]...)
	if f.Blobs != catalog.NoAccess {
		code, clients = append(code, blobsCode...), append(clients, "s3")
	}
	if f.Embeds || f.Generates {
		code, clients = append(code, providersCode...), append(clients, "bedrockruntime")
	}
	if f.Pipeline {
		code = append(code, pipelineCode...)
	}
	if len(f.Invokes) > 0 {
		code = append(code, invokerCode...)
	}
	if f.Connects {
		code = append(code, connectorsCode...)
	}
	if f.Searches {
		code = append(code, searchCode...)
	}
	return code, clients
}

// TestEveryFunctionLinksOnlyWhatItUses guards every function's cold start:
// its bootstrap (built with -tags lambda.norpc, as LambdaBuild does) may link
// only its family's code and the AWS clients its catalog entry says it uses;
// the deployed gateway, neither the tools' code nor the local server.
func TestEveryFunctionLinksOnlyWhatItUses(t *testing.T) {
	deps := linked(t)
	bindings := map[string]string{} // function path -> the bindings that serve it
	for pkg, fns := range map[string][]lambdafn.Function{
		"shared/handlers/memoryfn": memoryfn.Functions(), "shared/handlers/operationsfn": operationsfn.Functions(),
		"shared/handlers/vectorfn": vectorfn.Functions(), "shared/handlers/ragfn": ragfn.Functions(), "shared/handlers/ragstorefn": ragstorefn.Functions(),
		"shared/handlers/careerfn": careerfn.Functions(), "shared/handlers/connectorfn": connectorfn.Functions(),
		"shared/handlers/chatfn":      chatfn.Functions(),
		"shared/handlers/assistantfn": assistantfn.Functions(),
		"shared/handlers/websearchfn": websearchfn.Functions(),
	} {
		for _, f := range fns {
			bindings[f.Path] = pkg
		}
	}
	fns := catalog.Default().Functions()
	for _, f := range append(fns, catalog.Function{Path: GatewayPath}, catalog.Function{Path: KeyringPath}) {
		t.Run(f.Path, func(t *testing.T) {
			code, clients := gatewayCode, gatewayClients
			switch f.Path {
			case GatewayPath:
			case KeyringPath:
				code, bindings[f.Path] = keyringCode, "shared/keyring"
			default:
				code, clients = allowed(f, bindings[f.Path])
			}
			linked, ok := deps[f.Path]
			if !ok {
				t.Fatalf("go list lists no functions/%s", f.Path)
			}
			for _, pkg := range linked {
				if own, ok := strings.CutPrefix(pkg, module); ok && !slices.Contains(code, own) {
					t.Errorf("functions/%s links %s, which it should not", f.Path, own)
				}
				if name, ok := awsService(pkg); ok && !slices.Contains(clients, name) || pkg == "github.com/aws/aws-sdk-go-v2/config" {
					t.Errorf("functions/%s links %s, which it should not", f.Path, pkg)
				}
			}
			if f.Path != GatewayPath && !slices.Contains(linked, module+bindings[f.Path]) {
				t.Errorf("functions/%s does not link %s, the bindings that serve it", f.Path, bindings[f.Path])
			}
		})
	}
}

// extensions returns the internal extensions the bootstrap of the function
// at path registers: none for the gateway; for a tool function, the one
// that gets it SIGTERM (package shutdown, as the process starts), and the
// one that holds its environment if it works after its answers, sorted.
func extensions(t *testing.T, path string) []string {
	if path == GatewayPath {
		return nil
	}
	i := slices.IndexFunc(handlers.All(), func(f lambdafn.Function) bool { return f.Path == path })
	if i < 0 {
		t.Fatalf("handlers.All has no function %s", path)
	}
	if handlers.All()[i].Later {
		return []string{later.ExtensionName, shutdown.ExtensionName}
	}
	return []string{shutdown.ExtensionName}
}

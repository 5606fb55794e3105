// Command stack runs the deployed topology of template.yaml on this machine,
// without Docker or AWS: every function in the template as the bootstrap
// the Makefile builds for SAM (for linux and this machine's architecture),
// each in Lambda instances run by package lambdatest (the Lambda Runtime API
// the tests use; an instance starts, cold, when an invocation finds none
// idle) with the environment the template gives it; the Lambda Invoke API
// routing to them; an API Gateway stand-in sending the gateway function the
// events of the template's front door; DynamoDB Local and the local KMS
// (started by scripts/stack/services, as scripts/test starts them); gofakes3
// as S3, with the bucket's notifications to the indexer; and the state
// machines through aws-local-stepfunctions (scripts/stack/stepfunctions.mjs).
// It creates an API key as scripts/apikey does, prints the MCP endpoint and
// the key, and stops everything on Ctrl-C.
//
//	go run ./scripts/stack [--addr 127.0.0.1:8090] [--parameter Name=Value ...]
//	go run ./scripts/stack --bench 20   # tools/call p50, warm and cold, beside the local server; then exits
//
// The template's references resolve as README's "The whole stack, locally"
// lists: the stack name and its pseudo parameters, the table and bucket
// names CloudFormation would generate, the state machine's ARN, the ARNs of
// the keys the local KMS makes for the template's KMS keys (the connectors'
// key, with the default ConnectorKeyMode), and the ARNs of the template's secrets, whose generated
// values (as their GenerateSecretString asks) a Secrets Manager stand-in
// serves to the functions that read them at start; the attributes of the
// template's custom resources (the key rings of KeyStore ssm), which their
// functions create, as CloudFormation has them do, in an SSM Parameter
// Store stand-in that the functions then read at start. Every function also gets what Lambda sets
// (AWS_LAMBDA_FUNCTION_NAME, AWS_LAMBDA_FUNCTION_MEMORY_SIZE, the log
// format, the region, credentials) and AWS_ENDPOINT_URL_<SERVICE> for the
// stand-ins, the one difference from AWS.
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"golang.org/x/sync/errgroup"

	"github.com/switchboard-dev/switchboard/shared/apikey"
	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/config/secrets/secretstest"
	"github.com/switchboard-dev/switchboard/shared/config/secrets/ssmtest"
	"github.com/switchboard-dev/switchboard/shared/conformance"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/lambdatest"
	"github.com/switchboard-dev/switchboard/shared/store/dynamo"
)

// The account and region of the stack's ARNs; the credentials every
// process signs with (the stand-ins accept any).
const (
	region    = "us-east-1"
	account   = "123456789012"
	accessKey = "STACKLOCALKEY"
	secretKey = "stack-local-secret"
)

// measureCalls is how many calls --measure averages over.
const measureCalls = 20

// repeated is a flag that may be given many times.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

type options struct {
	addr, template, makefile, stackName, tenant, principal, logs string
	parameters                                                   repeated
	bench                                                        int
	conformance                                                  bool
	measure                                                      string
}

func main() {
	var o options
	flag.StringVar(&o.addr, "addr", "127.0.0.1:8090", "`host:port` of the API Gateway stand-in")
	flag.StringVar(&o.template, "template", "template.yaml", "the SAM `template`")
	flag.StringVar(&o.makefile, "makefile", "Makefile", "the `Makefile` whose build-<LogicalID> targets build the functions")
	flag.StringVar(&o.stackName, "stack-name", "switchboard-local", "the stack's `name` (AWS::StackName)")
	flag.Var(&o.parameters, "parameter", "a template parameter, `Name=Value`, as sam deploy --parameter-overrides takes it; may be repeated")
	flag.StringVar(&o.tenant, "tenant", "demo", "the `tenant` of the API key the stack creates")
	flag.StringVar(&o.principal, "principal", "stack", "the `principal` of that key")
	flag.StringVar(&o.logs, "logs", "", "a `folder` for the functions' logs, one file each (default: a temporary folder, removed at exit)")
	flag.IntVar(&o.bench, "bench", 0, "time `N` tools/call warm and N cold through the stack, and N through the local server, print the p50s and exit")
	flag.BoolVar(&o.conformance, "conformance", false, "serve the MCP conformance suite's fixtures too: the gateway built with -tags conformance, and the fixtures' functions beside the template's (for scripts/test)")
	flag.StringVar(&o.measure, "measure", "", "make each family's representative calls through the stack, write what its services billed per call to `file` (scripts/cost reads it) and exit")
	flag.Parse()
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, nil)))
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "stack:", err)
		os.Exit(1)
	}
}

// stack is the running topology.
type stack struct {
	work      string
	services  *exec.Cmd
	servIn    io.WriteCloser
	env       map[string]string // from scripts/stack/services: DYNAMODB_URL, KMS_URL, NODE, LOCAL_SFN
	functions map[string]*lambdatest.Function
	byID      map[string]*lambdatest.Function
	servers   []*http.Server
	sfn       *exec.Cmd
	tmpl      *Template
	meter     *meter
	mcpURL    string // the MCP endpoint, through the front door
	frontDoor string // what the front door is, for the banner
	key       string
}

func run(o options) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	work, err := os.MkdirTemp("", "switchboard-stack-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if o.logs == "" {
		o.logs = filepath.Join(work, "logs")
	}
	if err := os.MkdirAll(o.logs, 0o755); err != nil {
		return err
	}
	s := &stack{work: work, functions: map[string]*lambdatest.Function{}, byID: map[string]*lambdatest.Function{}, meter: newMeter()}
	defer s.close()
	started := time.Now()
	if err := s.start(ctx, o); err != nil {
		return err
	}
	fmt.Printf("Switchboard stack %q: %d functions of %s, built for linux/%s, started in %.1fs\n", o.stackName, len(s.tmpl.Functions), o.template, runtime.GOARCH, time.Since(started).Seconds())
	fmt.Printf("  MCP endpoint    %s (%s)\n", s.mcpURL, s.frontDoor)
	fmt.Printf("  API key         %s (tenant %s, principal %s): Authorization: Bearer <key>\n", s.key, o.tenant, o.principal)
	fmt.Printf("  Lambda API      %s\n", os.Getenv("AWS_ENDPOINT_URL_LAMBDA"))
	fmt.Printf("  DynamoDB        %s, table %s\n", s.env["DYNAMODB_URL"], s.tmpl.Table)
	fmt.Printf("  S3 (gofakes3)   %s, bucket %s\n", os.Getenv("AWS_ENDPOINT_URL_S3"), s.tmpl.Bucket)
	fmt.Printf("  Step Functions  %s (aws-local-stepfunctions)\n", os.Getenv("AWS_ENDPOINT_URL_SFN"))
	fmt.Printf("  KMS             %s\n", s.env["KMS_URL"])
	fmt.Printf("  SSM (stand-in)  %s\n", os.Getenv("AWS_ENDPOINT_URL_SSM"))
	fmt.Printf("  function logs   %s\n", o.logs)
	for _, line := range s.tmpl.Substituted {
		fmt.Printf("  resolved        %s\n", line)
	}
	if o.bench > 0 || o.measure != "" {
		if o.bench > 0 {
			if err := s.bench(ctx, o.bench); err != nil {
				return err
			}
		}
		if o.measure != "" {
			fmt.Printf("\nmeasuring %d calls of each family's representative tools, warm:\n", measureCalls)
			return s.measure(ctx, measureCalls, o.measure)
		}
		return nil
	}
	fmt.Println("Press Ctrl-C to stop.")
	<-ctx.Done()
	fmt.Println("stopping")
	return nil
}

// start brings the stack up: the bootstraps build while the services start;
// then the stand-ins, the functions (each started once, so that one that
// cannot initialise is reported now) and the front door.
func (s *stack) start(ctx context.Context, o options) error {
	data, err := os.ReadFile(o.template)
	if err != nil {
		return err
	}
	makefile, err := os.ReadFile(o.makefile)
	if err != nil {
		return err
	}
	site := Site{StackName: o.stackName, Region: region, Account: account, Parameters: map[string]string{}}
	b := make([]byte, 6)
	rand.Read(b)
	site.Suffix = hex.EncodeToString(b)
	for _, p := range o.parameters {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			return fmt.Errorf("--parameter %q: want Name=Value", p)
		}
		site.Parameters[k] = v
	}
	if s.tmpl, err = ReadTemplate(data, site); err != nil {
		return err
	}
	jobs, bins, err := buildJobs(makefile, s.tmpl.Functions, filepath.Join(s.work, "bin"), o.conformance)
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		t := time.Now()
		err := buildAll(gctx, jobs)
		if err == nil {
			fmt.Printf("built %d bootstraps in %.1fs\n", len(jobs), time.Since(t).Seconds())
		}
		return err
	})
	g.Go(s.startServices)
	if err := g.Wait(); err != nil {
		return err
	}

	// The process's own AWS configuration (for the API key, the table and
	// the KMS keys it creates) and the functions' endpoints.
	for k, v := range map[string]string{
		"AWS_REGION": region, "AWS_ACCESS_KEY_ID": accessKey, "AWS_SECRET_ACCESS_KEY": secretKey,
		"AWS_ENDPOINT_URL_DYNAMODB": s.env["DYNAMODB_URL"], "AWS_ENDPOINT_URL_KMS": s.env["KMS_URL"],
	} {
		os.Setenv(k, v)
	}
	awsCfg := aws.Config{Region: region, Credentials: credentials.NewStaticCredentialsProvider(accessKey, secretKey, "")}
	// The template's KMS keys (the connectors' key by default), made in the
	// local KMS; a second reading gives the functions their ARNs.
	if len(s.tmpl.Keys) > 0 {
		kmsClient := kms.NewFromConfig(awsCfg, func(o *kms.Options) { o.BaseEndpoint = aws.String(s.env["KMS_URL"]) })
		site.Keys = map[string]string{}
		for _, id := range s.tmpl.Keys {
			out, err := kmsClient.CreateKey(ctx, &kms.CreateKeyInput{Description: aws.String("scripts/stack " + id)})
			if err != nil {
				return fmt.Errorf("creating key %s in the local KMS: %w", id, err)
			}
			site.Keys[id] = *out.KeyMetadata.Arn
		}
		if s.tmpl, err = ReadTemplate(data, site); err != nil {
			return err
		}
	}
	ddb := awsCfg.Copy()
	ddb.BaseEndpoint = aws.String(s.env["DYNAMODB_URL"])
	if err := dynamo.CreateTable(ctx, ddb, s.tmpl.Table); err != nil {
		return err
	}

	lambdaURL, err := s.serve(lambdatest.InvokeAPI(s.functions, slog.Default()), "127.0.0.1:0")
	if err != nil {
		return err
	}
	var subs []s3Subscriber
	var s3Meter *meter
	if o.measure != "" {
		s3Meter = s.meter
	}
	s3h, err := newS3StandIn(s.tmpl.Bucket, region, nil, s3Meter, slog.Default())
	if err != nil {
		return err
	}
	s3URL, err := s.serve(s3h, "127.0.0.1:0")
	if err != nil {
		return err
	}
	sfnURL, err := s.startStepFunctions(lambdaURL)
	if err != nil {
		return err
	}
	// The template's secrets, which the functions read when they start.
	secretsURL, err := s.serve(secretstest.Handler(s.tmpl.Secrets), "127.0.0.1:0")
	if err != nil {
		return err
	}
	// SSM Parameter Store, where the custom resources of KeyStore ssm keep
	// the key rings that the functions read when they start.
	ssmURL, err := s.serve(ssmtest.Handler(), "127.0.0.1:0")
	if err != nil {
		return err
	}
	endpoints := map[string]string{
		"AWS_ENDPOINT_URL_DYNAMODB": s.env["DYNAMODB_URL"], "AWS_ENDPOINT_URL_KMS": s.env["KMS_URL"],
		"AWS_ENDPOINT_URL_LAMBDA": lambdaURL, "AWS_ENDPOINT_URL_S3": s3URL, "AWS_ENDPOINT_URL_SFN": sfnURL,
		"AWS_ENDPOINT_URL_SECRETS_MANAGER": secretsURL, "AWS_ENDPOINT_URL_SSM": ssmURL,
	}
	if o.measure != "" { // the functions reach DynamoDB, Step Functions and KMS through the meter
		for k, proxy := range map[string]func(*url.URL) http.Handler{
			"AWS_ENDPOINT_URL_DYNAMODB": s.meter.dynamoProxy, "AWS_ENDPOINT_URL_SFN": s.meter.sfnProxy, "AWS_ENDPOINT_URL_KMS": s.meter.kmsProxy,
		} {
			target, err := url.Parse(endpoints[k])
			if err != nil {
				return err
			}
			if endpoints[k], err = s.serve(proxy(target), "127.0.0.1:0"); err != nil {
				return err
			}
		}
	}
	for k, v := range endpoints {
		os.Setenv(k, v)
	}
	// The template's custom resources, created by their functions; a second
	// reading gives the other functions their attributes.
	if len(s.tmpl.CustomResources) > 0 {
		if err := s.createCustomResources(ctx, &site, bins, endpoints, o.logs); err != nil {
			return err
		}
		if s.tmpl, err = ReadTemplate(data, site); err != nil {
			return err
		}
	}

	// The functions: the InvokeAPI and the S3 stand-in read s.functions and
	// subs only from now on.
	var routes []route
	for _, f := range s.tmpl.Functions {
		log, err := os.Create(filepath.Join(o.logs, f.Name+".log"))
		if err != nil {
			return err
		}
		fn := lambdatest.NewFunction(bins[f.LogicalID], lambdaEnv(f, endpoints), &lambdatest.FunctionOptions{
			ARN: f.ARN, Timeout: time.Duration(f.Timeout) * time.Second, Log: log,
			Observe: s.meter.observer(strings.TrimPrefix(f.Name, o.stackName+"-")),
		})
		s.functions[f.Name], s.byID[f.LogicalID] = fn, fn
		for _, ev := range f.S3 {
			if ev.Bucket == s.tmpl.Bucket {
				subs = append(subs, s3Subscriber{name: f.Name, invoke: invoker(fn), event: ev})
			}
		}
		for _, ev := range f.HTTP {
			routes = append(routes, route{event: ev, invoke: invoker(fn)})
		}
	}
	s3h.subs = subs
	if o.conformance {
		if err := s.addFixtures(bins["fixtures"], endpoints, o.logs); err != nil {
			return err
		}
	}
	pg, _ := errgroup.WithContext(ctx)
	pg.SetLimit(2 * runtime.NumCPU())
	for name, f := range s.functions {
		pg.Go(func() error {
			if err := f.Prewarm(time.Second); err != nil {
				return fmt.Errorf("function %s: %w", name, err)
			}
			return nil
		})
	}
	if err := pg.Wait(); err != nil {
		return err
	}

	front, err := frontDoorHandler(routes)
	if err != nil {
		return err
	}
	at, door, ok := front.endpoint("/mcp")
	if !ok {
		return errors.New("the template's front door has no /mcp route")
	}
	frontURL, err := s.serve(front, o.addr)
	if err != nil {
		return err
	}
	s.mcpURL, s.frontDoor = frontURL+at, door.String()
	return s.createKey(ctx, o)
}

// addFixtures adds the conformance fixtures' functions, named as the
// gateway names the functions it invokes, each running the fixtures'
// bootstrap with the table.
func (s *stack) addFixtures(bin string, endpoints map[string]string, logs string) error {
	prefix := s.first(func(f *Function) bool { return len(f.HTTP) > 0 }).Env[config.EnvFunctionPrefix]
	for _, fx := range conformance.Extras().Functions {
		f := &Function{
			LogicalID: invoke.LogicalID(fx.Path), Name: prefix + invoke.FunctionName(fx.Path), Timeout: 10, MemoryMB: 128,
			Env: map[string]string{config.EnvTable: s.tmpl.Table, "SWITCHBOARD_STACK_FIXTURE": fx.Path},
		}
		f.ARN = "arn:aws:lambda:" + region + ":" + account + ":function:" + f.Name
		log, err := os.Create(filepath.Join(logs, f.Name+".log"))
		if err != nil {
			return err
		}
		s.functions[f.Name] = lambdatest.NewFunction(bin, lambdaEnv(f, endpoints), &lambdatest.FunctionOptions{ARN: f.ARN, Timeout: 10 * time.Second, Log: log})
	}
	return nil
}

// first returns the first function of the template that ok accepts.
func (s *stack) first(ok func(*Function) bool) *Function {
	for _, f := range s.tmpl.Functions {
		if ok(f) {
			return f
		}
	}
	return &Function{}
}

// createKey creates the API key as scripts/apikey create --table does.
func (s *stack) createKey(ctx context.Context, o options) error {
	cfg := config.Config{Table: s.tmpl.Table}
	table, closeFn, err := cfg.OpenTable(ctx, os.Stderr)
	if err != nil {
		return err
	}
	defer closeFn()
	s.key, _, err = apikey.New(table, nil).Create(ctx, o.tenant, o.principal, nil, time.Time{})
	return err
}

// lambdaEnv is the environment Lambda gives f's runtime: the template's
// variables, what Lambda itself sets
// (https://docs.aws.amazon.com/lambda/latest/dg/configuration-envvars.html),
// and the stand-ins' endpoints.
func lambdaEnv(f *Function, endpoints map[string]string) []string {
	env := []string{
		"AWS_REGION=" + region, "AWS_DEFAULT_REGION=" + region,
		"AWS_ACCESS_KEY_ID=" + accessKey, "AWS_SECRET_ACCESS_KEY=" + secretKey, "AWS_SESSION_TOKEN=stack-local-session",
		"AWS_LAMBDA_FUNCTION_NAME=" + f.Name, "AWS_LAMBDA_FUNCTION_VERSION=$LATEST",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE=" + strconv.Itoa(f.MemoryMB),
		"AWS_LAMBDA_LOG_GROUP_NAME=/aws/lambda/" + f.Name, "AWS_LAMBDA_LOG_STREAM_NAME=local",
		"AWS_LAMBDA_INITIALIZATION_TYPE=on-demand",
		"_HANDLER=bootstrap", "LAMBDA_TASK_ROOT=/var/task", "LAMBDA_RUNTIME_DIR=/var/runtime", "TZ=:UTC",
	}
	if f.LogFormat == "JSON" {
		env = append(env, "AWS_LAMBDA_LOG_FORMAT=JSON", "AWS_LAMBDA_LOG_LEVEL="+f.LogLevel)
	}
	for k, v := range endpoints {
		env = append(env, k+"="+v)
	}
	for k, v := range f.Env {
		env = append(env, k+"="+v)
	}
	return env
}

// route is one API event of a function, and how to invoke the function.
type route struct {
	event  HTTPEvent
	invoke invokeFunc
}

func invoker(f *lambdatest.Function) invokeFunc {
	return func(ctx context.Context, payload []byte, onChunk func(lambdatest.Chunk)) (*lambdatest.Result, error) {
		res, _, err := f.InvokeStreaming(ctx, payload, onChunk)
		return res, err
	}
}

// startServices runs scripts/stack/services and reads what it started.
func (s *stack) startServices() error {
	cmd := exec.Command("scripts/stack/services", s.work)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting scripts/stack/services: %w", err)
	}
	s.services, s.servIn = cmd, in
	s.env = map[string]string{}
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		if lines.Text() == "ready" {
			go io.Copy(io.Discard, out)
			return nil
		}
		if k, v, ok := strings.Cut(lines.Text(), "="); ok {
			s.env[k] = v
		}
	}
	return errors.New("scripts/stack/services stopped before its services were ready")
}

// startStepFunctions writes the template's state machines, their
// substitutions made, and serves them with scripts/stack/stepfunctions.mjs.
func (s *stack) startStepFunctions(lambdaURL string) (string, error) {
	var machines []map[string]any
	for _, sm := range s.tmpl.StateMachines {
		if sm.Type != "EXPRESS" {
			return "", fmt.Errorf("state machine %s is %s: this stack runs the synchronous executions of Express state machines only", sm.LogicalID, sm.Type)
		}
		def, err := os.ReadFile(sm.DefinitionURI)
		if err != nil {
			return "", err
		}
		text := string(def)
		for k, v := range sm.Substitutions {
			text = strings.ReplaceAll(text, "${"+k+"}", v)
		}
		var parsed any
		if err := json.Unmarshal([]byte(text), &parsed); err != nil {
			return "", fmt.Errorf("state machine %s: %w", sm.LogicalID, err)
		}
		machines = append(machines, map[string]any{"arn": sm.ARN, "definition": parsed})
	}
	file := filepath.Join(s.work, "machines.json")
	b, _ := json.Marshal(machines)
	if err := os.WriteFile(file, b, 0o600); err != nil {
		return "", err
	}
	cmd := exec.Command(s.env["NODE"], "scripts/stack/stepfunctions.mjs", lambdaURL, file)
	cmd.Env = append(os.Environ(), "LOCAL_SFN="+s.env["LOCAL_SFN"])
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	s.sfn = cmd
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		if url, ok := strings.CutPrefix(lines.Text(), "serving the Step Functions API at "); ok {
			go io.Copy(os.Stderr, out)
			return url, nil
		}
	}
	return "", errors.New("scripts/stack/stepfunctions.mjs stopped before serving")
}

// serve serves h on addr and returns its URL.
func (s *stack) serve(h http.Handler, addr string) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	s.servers = append(s.servers, srv)
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), nil
}

// close stops everything started, newest first.
func (s *stack) close() {
	var wg sync.WaitGroup
	for _, f := range s.functions {
		wg.Add(1)
		go func() { defer wg.Done(); f.Close() }()
	}
	wg.Wait()
	for _, srv := range s.servers {
		srv.Close()
	}
	if s.sfn != nil {
		s.sfn.Process.Signal(syscall.SIGTERM)
		s.sfn.Wait()
	}
	if s.services != nil {
		s.servIn.Close() // services stops what it started and exits
		s.services.Wait()
	}
}

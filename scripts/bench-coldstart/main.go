// Command bench-coldstart measures the cold start of every function beside a
// hello-world aws-lambda-go bootstrap (hello/), in one run: it builds each
// bootstrap for this machine with the Lambda flags, then N times execs each
// against an in-process Lambda Runtime API (shared/lambdatest), runs
// interleaved, and times exec to the first answered event. It reports each
// function's p50 and what it adds to hello's p50, and beside them the CPU
// time each process used (which load inflates far less than wall time),
// against issue 11's targets
// (the gateway at most 5 ms more than hello, every tool function at most
// 8 ms more), and the size of every bootstrap for linux/arm64 (issue 2's
// target: 25 MB).
//
//	go run ./scripts/bench-coldstart [-n 20] [-functions REGEXP] [-table dynamodb|file] [-inittrace] [-baseline DIR]
//
// The gateway answers an MCP initialize request; with -table dynamodb (the
// default) it is configured as on AWS, with a DynamoDB table name and an
// endpoint it never reaches (neither its start nor an anonymous initialize
// touches the table), with -table file it opens an embedded table file. A
// tool function answers its first sample event (events/) on an embedded table
// and a local folder seeded as the bootstrap tests seed them (deploy.Seed),
// a fresh copy for each run, on a memory file system when there is one (so
// that the store's file syncs do not count): its figure includes the work of
// that call on the embedded store, not the DynamoDB and S3 calls it would
// make on AWS. A pipeline tool calls the state machine, as on AWS: a
// stand-in of the Step Functions API on 127.0.0.1 answers its
// StartSyncExecution with a fixed run. A connector tool reaches a real
// upstream, as on AWS: the sample connector is pointed at a go-sdk MCP
// server over TLS on 127.0.0.1 and synced before each round of runs (as
// the scheduled sync keeps a connector: its cache fresh, the protocol
// version its upstream negotiated remembered), which the connector
// functions allow (the allow-list setting) and trust (SSL_CERT_FILE names a CA bundle, this machine's with
// its certificate, and no certificate folder), so that connector_verify and
// connector_sync connect, initialise and list rather than wait out an
// upstream that does not exist. Every bootstrap gets a Lambda-like
// environment and nothing else: AWS_CA_BUNDLE, which this machine sets and
// Lambda does not, never reaches it.
//
// -baseline DIR builds the functions of another checkout too (a worktree of
// main, say) and measures them in the same interleaved runs, so that a change
// is measured against its baseline under the same load: on a shared machine,
// figures taken minutes apart differ more than most changes do. -inittrace
// runs each bootstrap of this tree once more with GODEBUG=inittrace=1 and
// lists the package initialisers that cost the most.
package main

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"flag"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/connector"
	"github.com/switchboard-dev/switchboard/shared/deploy"
	"github.com/switchboard-dev/switchboard/shared/elicit"
	"github.com/switchboard-dev/switchboard/shared/lambdatest"
	"github.com/switchboard-dev/switchboard/shared/netguard"
	"github.com/switchboard-dev/switchboard/shared/pipeline"
	"github.com/switchboard-dev/switchboard/shared/pipeline/stepfunctions"
	"github.com/switchboard-dev/switchboard/shared/store/embedded"
	"github.com/switchboard-dev/switchboard/shared/store/localfs"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// Targets from issue 11 (cold start over hello's) and issue 2 (size).
const (
	targetGateway = 5 * time.Millisecond
	targetTool    = 8 * time.Millisecond
	targetSize    = 25 << 20
)

var buildFlags = []string{"-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w"}

func main() {
	n := flag.Int("n", 20, "cold starts to measure of each bootstrap")
	functions := flag.String("functions", "", "`regexp` of the function paths to measure (gateway, memory/add_message, ...); all if empty")
	table := flag.String("table", "dynamodb", "the gateway's table: dynamodb (as on AWS, never reached) or file (embedded)")
	inittrace := flag.Bool("inittrace", false, "also run each bootstrap once with GODEBUG=inittrace=1 and list its costliest package initialisers")
	baseline := flag.String("baseline", "", "`dir`ectory of another checkout whose functions to measure too, in the same interleaved runs")
	flag.Parse()
	if err := run(*n, *functions, *table, *inittrace, *baseline); err != nil {
		fmt.Fprintln(os.Stderr, "bench-coldstart:", err)
		os.Exit(1)
	}
}

// bootstrap is a binary to measure.
type bootstrap struct {
	tree     string // "this tree", "baseline" or "" for hello
	function string // its path under functions/, or "hello"
	path     string
	memoryMB int
	pipeline bool // it runs the RAG pipeline (through stepFunctions)
	connects bool // it reaches connectors' upstreams: it needs their credentials' key
	event    []byte
	times    []time.Duration
	cpu      []time.Duration // user and system time, start to exit
}

func run(n int, only, table string, inittrace bool, baseline string) error {
	if _, err := os.Stat("go.mod"); err != nil {
		return fmt.Errorf("run it from the repository root: %w", err)
	}
	if table != "dynamodb" && table != "file" {
		return fmt.Errorf("-table %q: want dynamodb or file", table)
	}
	match, err := regexp.Compile(only)
	if err != nil {
		return fmt.Errorf("-functions: %w", err)
	}
	dir, err := os.MkdirTemp("", "bench-coldstart")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	cat := catalog.Default()
	events, err := firstEvents(cat)
	if err != nil {
		return err
	}
	var fns []deploy.Function
	for _, f := range deploy.Functions(cat) {
		if match.MatchString(f.Path) {
			fns = append(fns, f)
		}
	}
	host := runtime.GOOS + "_" + runtime.GOARCH
	hello := &bootstrap{function: "hello", path: filepath.Join(dir, host, "hello"), event: []byte(`{}`), memoryMB: 128}
	if err := build(".", runtime.GOOS, runtime.GOARCH, hello.path, "./scripts/bench-coldstart/hello"); err != nil {
		return err
	}
	bins := []*bootstrap{hello}
	trees := []struct{ name, root string }{{"this tree", "."}}
	if baseline != "" {
		trees = append(trees, struct{ name, root string }{"baseline", baseline})
	}
	for _, tree := range trees {
		for _, f := range fns {
			if _, err := os.Stat(filepath.Join(tree.root, "functions", filepath.FromSlash(f.Path), "main.go")); err != nil {
				continue // not a function of that tree
			}
			b := &bootstrap{tree: tree.name, function: f.Path, memoryMB: f.Limits.MemoryMB, pipeline: f.Pipeline, connects: f.Connects, event: events[f.Path],
				path: filepath.Join(dir, host, strings.ReplaceAll(tree.name, " ", "-"), filepath.FromSlash(f.Path), "bootstrap")}
			if err := build(tree.root, runtime.GOOS, runtime.GOARCH, b.path, "./functions/"+f.Path); err != nil {
				return fmt.Errorf("%s: %w", tree.name, err)
			}
			bins = append(bins, b)
		}
	}
	up, upCA, err := upstream()
	if err != nil {
		return err
	}
	defer func() {
		up.CloseClientConnections() // the connectors' sessions hold event streams open
		up.Close()
	}()
	certs, err := trustUpstream(filepath.Join(dir, "certs"), upCA)
	if err != nil {
		return err
	}
	connectorEnv = append([]string{config.EnvConnectorAllowedHosts + "=" + deploy.SampleConnectorHost + "," + upstreamHost}, certs...)
	seed := filepath.Join(dir, "seed")
	if err := seedData(seed, up); err != nil {
		return err
	}
	runs, err := runsDir(dir)
	if err != nil {
		return err
	}
	defer os.RemoveAll(runs)
	sfn := stepFunctions()
	defer sfn.Close()
	pipelineEnv = []string{config.EnvPipelineARN + "=arn:aws:states:us-east-1:123456789012:stateMachine:bench", "AWS_ENDPOINT_URL_SFN=" + sfn.URL}

	fmt.Printf("Cold start, exec to the first answer (%s, %d CPUs, load average %s), %d runs of each of %d bootstraps interleaved, gateway table %s, AWS_CA_BUNDLE unset:\n",
		host, runtime.NumCPU(), loadAverage(), n, len(bins), table)
	for i := range n {
		// As the scheduled sync keeps it: the rounds of a run of all the
		// bootstraps outlast the cache TTL, and connector_tools_openai
		// would then sync first.
		if err := resyncSample(seed, up); err != nil {
			return err
		}
		// Rotate which bootstrap goes first, so that none always follows the same one.
		for k := range bins {
			b := bins[(i+k)%len(bins)]
			env, err := environment(b, filepath.Join(runs, strconv.Itoa(i)), seed, table)
			if err != nil {
				return err
			}
			d, cpu, err := coldStart(b.path, env, b.event)
			if err != nil {
				return fmt.Errorf("%s %s, run %d: %w", b.tree, b.function, i+1, err)
			}
			b.times, b.cpu = append(b.times, d), append(b.cpu, cpu)
		}
		os.RemoveAll(filepath.Join(runs, strconv.Itoa(i)))
	}
	report(bins, hello)

	fmt.Println("\nBinary sizes, linux/arm64, -tags lambda.norpc -trimpath -ldflags='-s -w':")
	largest := int64(0)
	for _, f := range fns {
		line := fmt.Sprintf("  %-30s", f.Path)
		for _, tree := range trees {
			if _, err := os.Stat(filepath.Join(tree.root, "functions", filepath.FromSlash(f.Path), "main.go")); err != nil {
				continue
			}
			bin := filepath.Join(dir, "linux_arm64", strings.ReplaceAll(tree.name, " ", "-"), filepath.FromSlash(f.Path), "bootstrap")
			if err := build(tree.root, "linux", "arm64", bin, "./functions/"+f.Path); err != nil {
				return err
			}
			info, err := os.Stat(bin)
			if err != nil {
				return err
			}
			if tree.root == "." {
				largest = max(largest, info.Size())
			}
			line += fmt.Sprintf(" %6.1f MB (%s)", float64(info.Size())/(1<<20), tree.name)
		}
		fmt.Println(line)
	}
	fmt.Printf("  target %d MB: %s\n", targetSize>>20, verdict(largest <= targetSize))

	if inittrace {
		for _, b := range bins {
			if b.tree == "this tree" || b.tree == "" {
				if err := traceInit(b, filepath.Join(dir, "trace"), seed, table); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// report prints each bootstrap's p50 and what it adds to hello's, and the
// same of the CPU time each process used (start to exit): on a loaded
// machine the wall times spread with the load, the CPU times much less.
func report(bins []*bootstrap, hello *bootstrap) {
	anchor, cpuAnchor := pct(hello.times, 50), pct(hello.cpu, 50)
	fmt.Printf("  %-30s p50 %s, p90 %s, CPU p50 %s (the anchor: a hello-world aws-lambda-go bootstrap)\n", "hello", ms(anchor), ms(pct(hello.times, 90)), ms(cpuAnchor))
	fmt.Printf("  %-30s %-10s %10s %10s %10s %10s %10s  %s\n", "function", "tree", "p50", "p90", "+hello", "CPU p50", "CPU+hello", "target")
	missed := 0
	for _, b := range bins[1:] {
		p50 := pct(b.times, 50)
		target := targetTool
		if b.function == deploy.GatewayPath {
			target = targetGateway
		}
		over := p50 - anchor
		v := ""
		if b.tree == "this tree" {
			v = fmt.Sprintf("+%s: %s", ms(target), verdict(over <= target))
			if over > target {
				missed++
			}
		}
		cpu := pct(b.cpu, 50)
		fmt.Printf("  %-30s %-10s %10s %10s %10s %10s %10s  %s\n", b.function, b.tree, ms(p50), ms(pct(b.times, 90)), fmt.Sprintf("%+.1f ms", over.Seconds()*1000),
			ms(cpu), fmt.Sprintf("%+.1f ms", (cpu-cpuAnchor).Seconds()*1000), v)
	}
	fmt.Printf("  functions of this tree over their target: %d\n", missed)
}

// firstEvents returns the first sample event of every function: the
// gateway's initialize request, and each tool's first in events/ order.
func firstEvents(cat *catalog.Catalog) (map[string][]byte, error) {
	evs, err := deploy.Events(cat)
	if err != nil {
		return nil, err
	}
	sort.Slice(evs, func(i, j int) bool { return evs[i].Path < evs[j].Path })
	first := map[string][]byte{}
	for _, ev := range evs {
		if ev.Function == deploy.GatewayPath && ev.Method != "initialize" {
			continue
		}
		if _, ok := first[ev.Function]; !ok {
			first[ev.Function] = ev.Payload
		}
	}
	return first, nil
}

// seedData writes, under dir, the embedded table and the blob folder the
// sample events need (deploy.Seed), with the sample connector at up;
// each run gets a copy.
func seedData(dir string, up *httptest.Server) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tbl, err := embedded.Open(filepath.Join(dir, "t.db"), nil)
	if err != nil {
		return err
	}
	blobs := localfs.New(filepath.Join(dir, "blobs"))
	err = deploy.Seed(context.Background(), tbl, blobs)
	if err == nil {
		err = pointConnector(context.Background(), tbl, up)
	}
	blobs.Close()
	if cerr := tbl.Close(); err == nil {
		err = cerr
	}
	return err
}

// upstreamHost is where [upstream] listens.
const upstreamHost = "127.0.0.1"

// upstream serves, over TLS on [upstreamHost], a go-sdk MCP server with one
// tool: the sample connector's upstream. Its certificate is an ECDSA P-256
// one issued by a CA of its own, which it returns: what most servers
// present to a client that offers ECDSA (Let's Encrypt's certbot issues
// those by default), and whose signature costs the upstream, which shares
// this machine with the bootstrap measured, a fraction of what httptest's
// RSA-2048 certificate's does.
func upstream() (*httptest.Server, *x509.Certificate, error) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "upstream", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "echoes its text"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	ca, leaf, err := upstreamCertificates()
	if err != nil {
		return nil, nil, err
	}
	up := httptest.NewUnstartedServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	up.TLS = &tls.Config{Certificates: []tls.Certificate{leaf}}
	up.StartTLS()
	return up, ca, nil
}

// upstreamCertificates makes a CA and a certificate it issues for
// [upstreamHost].
func upstreamCertificates() (*x509.Certificate, tls.Certificate, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	now := time.Now()
	caTemplate := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "bench-coldstart CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{SerialNumber: big.NewInt(2),
		Subject: pkix.Name{CommonName: upstreamHost}, IPAddresses: []net.IP{net.ParseIP(upstreamHost)},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}, ca, &leafKey.PublicKey, caKey)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	return ca, tls.Certificate{Certificate: [][]byte{leafDER}, PrivateKey: leafKey}, nil
}

// pointConnector moves the sample connector, which deploy.Seed registers
// at a host that does not exist, to up, and syncs it once: the connector is
// then as the scheduled sync leaves it, remembering the protocol version
// its upstream negotiated.
func pointConnector(ctx context.Context, tbl *embedded.Table, up *httptest.Server) error {
	conns := sampleConnectors(tbl, up)
	defer conns.Close()
	sample := tenant.Caller{Tenant: deploy.SampleTenant, Principal: deploy.SamplePrincipal}
	got, err := conns.Get(ctx, sample, connector.NameInput{Name: deploy.SampleConnector})
	if err != nil {
		return fmt.Errorf("pointing the sample connector at the upstream: %w", err)
	}
	if _, err := conns.Update(ctx, sample, connector.UpdateInput{Name: deploy.SampleConnector, Version: got.Connector.Version, BaseURL: up.URL + "/mcp"}); err != nil {
		return fmt.Errorf("pointing the sample connector at the upstream: %w", err)
	}
	return syncSample(ctx, conns)
}

// resyncSample syncs the sample connector of the seed under dir again.
func resyncSample(dir string, up *httptest.Server) error {
	tbl, err := embedded.Open(filepath.Join(dir, "t.db"), nil)
	if err != nil {
		return err
	}
	conns := sampleConnectors(tbl, up)
	err = syncSample(context.Background(), conns)
	conns.Close()
	if cerr := tbl.Close(); err == nil {
		err = cerr
	}
	return err
}

// syncSample syncs the sample connector of conns.
func syncSample(ctx context.Context, conns *connector.Service) error {
	sample := tenant.Caller{Tenant: deploy.SampleTenant, Principal: deploy.SamplePrincipal}
	if _, err := conns.Sync(ctx, sample, connector.NameInput{Name: deploy.SampleConnector}); err != nil {
		return fmt.Errorf("syncing the sample connector: %w", err)
	}
	return nil
}

// sampleConnectors returns the connectors of tbl, allowed to reach up.
func sampleConnectors(tbl *embedded.Table, up *httptest.Server) *connector.Service {
	guard := &netguard.Policy{AllowedHosts: []string{upstreamHost}}
	return connector.New(tbl, nil, &connector.Options{CheckURL: guard.CheckURL, HTTPClient: up.Client()})
}

// connectorEnv lets a connector function reach [upstream] and trust its
// certificate.
var connectorEnv []string

// systemBundles are where Linux distributions keep their CA bundle.
var systemBundles = []string{"/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt"}

// trustUpstream writes, under dir, a CA bundle of this machine's (if it has
// one) and the upstream's CA, and returns the environment that makes a
// bootstrap trust it alone: one bundle file, as on Lambda, whose image has
// one; this machine's certificate folder (hundreds of files, which Go would
// read at the first TLS handshake) is left out.
func trustUpstream(dir string, ca *x509.Certificate) ([]string, error) {
	if err := os.MkdirAll(filepath.Join(dir, "none"), 0o755); err != nil {
		return nil, err
	}
	var bundle []byte
	for _, f := range systemBundles {
		if b, err := os.ReadFile(f); err == nil {
			bundle = b
			break
		}
	}
	bundle = append(bundle, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw})...)
	file := filepath.Join(dir, "bundle.pem")
	if err := os.WriteFile(file, bundle, 0o644); err != nil {
		return nil, err
	}
	return []string{"SSL_CERT_FILE=" + file, "SSL_CERT_DIR=" + filepath.Join(dir, "none")}, nil
}

// pipelineEnv points a pipeline function at [stepFunctions].
var pipelineEnv []string

// stepFunctions serves the Step Functions API's StartSyncExecution with a
// succeeded run of the pipeline that found one relevant document: a
// pipeline tool's first call then does what it does on AWS, one call to the
// state machine.
func stepFunctions() *httptest.Server {
	out, _ := json.Marshal(pipeline.Output{
		Question: "How often should I replace my toothbrush?", ContextInput: "How often should I replace my toothbrush?",
		Documents: []pipeline.Document{{DocID: "dental-guide", ChunkID: "dental-guide#0", Content: "Replace your toothbrush every three months, or sooner if the bristles fray.",
			Score: 0.83, Metadata: map[string]string{"source": "dental-guide.md"}, Store: "health"}},
		SearchedStores: []string{"health"}, Relevant: "yes", Graded: true, Degraded: []string{},
	})
	return httptest.NewServer(stepfunctions.Handler(func(context.Context, []byte) ([]byte, error) { return out, nil }))
}

// runsDir returns a folder for the runs' data: on a memory file system
// (/dev/shm) when there is one, so that the embedded store's file syncs,
// which a function on DynamoDB does not make, are not counted; else under
// dir.
func runsDir(dir string) (string, error) {
	if info, err := os.Stat("/dev/shm"); err == nil && info.IsDir() {
		return os.MkdirTemp("/dev/shm", "bench-coldstart-runs")
	}
	return os.MkdirTemp(dir, "runs")
}

// environment is the environment of b in Lambda: dummy credentials,
// endpoints that are never reached, and for a tool function a fresh copy,
// under dir, of the seeded table and blobs.
func environment(b *bootstrap, dir, seed, table string) ([]string, error) {
	env := []string{
		"AWS_LAMBDA_FUNCTION_NAME=switchboard-" + strings.ReplaceAll(b.function, "/", "-"),
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE=" + strconv.Itoa(b.memoryMB),
		"AWS_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=AKIDBENCH",
		"AWS_SECRET_ACCESS_KEY=bench",
		"AWS_EC2_METADATA_DISABLED=true",
		"AWS_CONFIG_FILE=" + os.DevNull,
		"AWS_SHARED_CREDENTIALS_FILE=" + os.DevNull,
	}
	switch {
	case b.function == "hello":
		return env, nil
	case b.function == deploy.GatewayPath:
		env = append(env, "AWS_ENDPOINT_URL_LAMBDA=http://127.0.0.1:9",
			config.EnvFunctionPrefix+"=switchboard-", config.EnvAnonymousTenant+"="+deploy.SampleTenant,
			config.EnvRequestStateKeys+`={"k1":"`+elicit.NewSecret()+`"}`)
		if table == "dynamodb" {
			return append(env, config.EnvTable+"=switchboard-Table-BENCH", "AWS_ENDPOINT_URL_DYNAMODB=http://127.0.0.1:9"), nil
		}
	}
	if b.pipeline {
		env = append(env, pipelineEnv...)
	}
	data := filepath.Join(dir, strings.ReplaceAll(b.tree, " ", "-"), filepath.FromSlash(b.function))
	if err := copyTree(seed, data); err != nil {
		return nil, err
	}
	if b.connects {
		// A local key file, as the bootstrap tests give them, and the
		// upstream, allowed and trusted.
		env = append(env, config.EnvConnectorKey+"="+config.FilePrefix+filepath.Join(data, "connector-keys.json"))
		env = append(env, connectorEnv...)
	}
	return append(env, config.EnvTable+"="+config.FilePrefix+filepath.Join(data, "t.db"),
		config.EnvBucket+"="+config.FilePrefix+filepath.Join(data, "blobs")), nil
}

// copyTree copies the files under src to dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
}

// build builds pkg of the module in dir for goos/goarch with the Lambda flags.
func build(dir, goos, goarch, out, pkg string) error {
	out, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	args := append(append([]string{"build"}, buildFlags...), "-o", out, pkg)
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, b)
	}
	return nil
}

// coldStart execs the bootstrap and returns the time from exec to its
// answer to event, which must not be a function error, and the CPU time the
// process used in all (it idles once it has answered, until stopped).
func coldStart(bin string, env []string, event []byte) (wall, cpu time.Duration, err error) {
	rt := lambdatest.NewRuntime(nil)
	defer rt.Close()
	p, err := lambdatest.Start(rt, bin, env)
	if err != nil {
		return 0, 0, err
	}
	defer p.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := p.Invoke(ctx, event)
	if err != nil {
		return 0, 0, err
	}
	if res.Error != nil {
		return 0, 0, fmt.Errorf("function error %v\n%s", res.Error, p.Output())
	}
	p.Stop()
	return res.Answered.Sub(p.Started()), p.CPUTime(), nil
}

// traceInit runs b once with GODEBUG=inittrace=1 and prints the package
// initialisers that took longest.
func traceInit(b *bootstrap, dir, seed, table string) error {
	env, err := environment(b, dir, seed, table)
	if err != nil {
		return err
	}
	rt := lambdatest.NewRuntime(nil)
	defer rt.Close()
	p, err := lambdatest.Start(rt, b.path, append(env, "GODEBUG=inittrace=1"))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := p.Invoke(ctx, b.event); err != nil {
		return err
	}
	p.Stop()
	// init github.com/x/y @1.2 ms, 0.31 ms clock, 12345 bytes, 67 allocs
	re := regexp.MustCompile(`^init (\S+) @([\d.]+) ms, ([\d.]+) ms clock, (\d+) bytes, (\d+) allocs`)
	type pkgInit struct {
		name  string
		clock float64
		bytes int
	}
	var inits []pkgInit
	var sum float64
	sc := bufio.NewScanner(strings.NewReader(p.Output()))
	for sc.Scan() {
		m := re.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		clock, _ := strconv.ParseFloat(m[3], 64)
		bytes, _ := strconv.Atoi(m[4])
		inits = append(inits, pkgInit{m[1], clock, bytes})
		sum += clock
	}
	slices.SortFunc(inits, func(a, b pkgInit) int { return int((b.clock - a.clock) * 1e6) })
	fmt.Printf("\n%s: package initialisers (GODEBUG=inittrace=1): %d packages, %.2f ms in total; the costliest:\n", b.function, len(inits), sum)
	for _, in := range inits[:min(8, len(inits))] {
		fmt.Printf("  %7.2f ms  %8d B  %s\n", in.clock, in.bytes, in.name)
	}
	return nil
}

func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[max(0, min(len(s)-1, i-1))].Round(100 * time.Microsecond)
}

// ms formats d in milliseconds.
func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", d.Seconds()*1000) }

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

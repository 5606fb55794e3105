// Command bench-career measures the career family on the local endpoint
// (issue 4, "Figures to report"): index_build throughput in artifacts per
// second over a few hundred generated resumes and opportunities, and
// match_opportunity latency percentiles.
//
// It assembles Switchboard as `go run ./functions/gateway` does (the local
// configuration in a temporary folder: embedded table, local-folder object
// store, every function in process (package local, [handlers.All]), the anonymous local
// caller), serves it on 127.0.0.1 with net/http, and talks to it as a host
// does, through a go-sdk MCP client over Streamable HTTP. Every call goes
// gateway -> invoke.Local -> the tool's Lambda handler.
//
// Steps: ingest -resumes generated Markdown resumes (ingest_resume, inline,
// persisted), create -opps opportunities, then index_build scope all three
// times: from nothing, with nothing changed (everything skipped), and after
// editing a tenth of the opportunities (those stale). Then -matches
// sequential match_opportunity calls per strategy, against stored
// opportunities in turn.
//
//	go run ./scripts/bench-career                      # -resumes 300 -opps 200 -matches 200
//	SWITCHBOARD_TEST_DYNAMODB=http://127.0.0.1:8765 go run ./scripts/bench-career -dynamo
//
// The data is generated from a fixed seed, so runs compare. It is a
// benchmark, not a test: it prints figures and asserts nothing about time; it
// exits 1 if a call fails or a count is not what the steps imply.
package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/career"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/config/blobs"
	"github.com/switchboard-dev/switchboard/shared/config/providers"
	"github.com/switchboard-dev/switchboard/shared/gateway"
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/local"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/dynamo"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

func main() {
	resumes := flag.Int("resumes", 300, "generated resumes to ingest")
	opps := flag.Int("opps", 200, "generated opportunities to create")
	matches := flag.Int("matches", 200, "match_opportunity calls per strategy")
	useDynamo := flag.Bool("dynamo", false, "keep the table in the DynamoDB Local at $"+dynamoEnv+" (a table of its own, deleted afterwards) instead of the embedded file")
	flag.Parse()
	if *resumes < 1 || *opps < 10 || *matches < 1 {
		fmt.Fprintln(os.Stderr, "bench-career: -resumes and -matches must be positive, -opps at least 10")
		os.Exit(2)
	}
	if err := run(context.Background(), *resumes, *opps, *matches, *useDynamo, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench-career:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, nResumes, nOpps, nMatches int, useDynamo bool, w io.Writer) error {
	dir, err := os.MkdirTemp("", "bench-career-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cfg := config.Local(filepath.Join(dir, "data"))
	deps, closeFn, err := lambdafn.Open(ctx, &cfg, lambdafn.Openers{Blobs: blobs.Open, Providers: providers.Open}, io.Discard)
	if err != nil {
		return err
	}
	defer closeFn()
	deps.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if deps.Embedder == nil {
		return errors.New("the local configuration opened no embedder")
	}
	tableName := "embedded table"
	if useDynamo {
		tbl, drop, err := openDynamo(ctx)
		if err != nil {
			return err
		}
		defer drop()
		deps.Table, tableName = tbl, "DynamoDB Local table"
	}
	url, stop, err := serve(deps)
	if err != nil {
		return err
	}
	defer stop()
	client := mcp.NewClient(&mcp.Implementation{Name: "bench-career", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", url, err)
	}
	defer cs.Close()

	fmt.Fprintf(w, "bench-career: %d resumes, %d opportunities, %d matches per strategy, on the local endpoint (gateway -> invoke.Local -> Lambda handlers), %s, local-folder objects\n", nResumes, nOpps, nMatches, tableName)
	fmt.Fprintf(w, "embedder %s/%s (%d dims); %s %s/%s, GOMAXPROCS=%d, NumCPU=%d; the machine is shared with other work\n\n",
		deps.Embedder.Provider(), deps.Embedder.Model(), deps.Embedder.Dims(), runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0), runtime.NumCPU())

	rng := rand.New(rand.NewPCG(4, 2026))
	atoms := 0
	t0 := time.Now()
	for i := range nResumes {
		md := resume(rng, i)
		var out career.IngestResumeOutput
		if err := call(ctx, cs, "ingest_resume", map[string]any{"file_name": fmt.Sprintf("resume-%03d.md", i), "content_base64": base64.StdEncoding.EncodeToString([]byte(md))}, &out); err != nil {
			return err
		}
		atoms += len(out.Atoms)
	}
	ingest := time.Since(t0)
	fmt.Fprintf(w, "ingest_resume: %d resumes (%d atoms) in %.2fs: %.1f resumes/s\n", nResumes, atoms, ingest.Seconds(), float64(nResumes)/ingest.Seconds())
	var oppIDs []string
	var oppVers []int64
	var oppArgs []map[string]any
	for i := range nOpps {
		args := opportunity(rng, i)
		var out career.OpportunityOutput
		if err := call(ctx, cs, "opportunity_create", args, &out); err != nil {
			return err
		}
		oppIDs, oppVers, oppArgs = append(oppIDs, out.Opportunity.OpportunityID), append(oppVers, out.Opportunity.Version), append(oppArgs, args)
	}

	artifacts := atoms + nResumes + nOpps
	build := func(label string, want career.IndexCounts) error {
		var out career.IndexBuildOutput
		t0 := time.Now()
		if err := call(ctx, cs, "index_build", map[string]any{"scope": "all"}, &out); err != nil {
			return err
		}
		d := time.Since(t0)
		fmt.Fprintf(w, "index_build %-28s %5d artifacts in %6.2fs: %7.0f artifacts/s  (indexed %d, skipped %d, stale %d)\n",
			label, artifacts, d.Seconds(), float64(artifacts)/d.Seconds(), out.Counts.Indexed, out.Counts.Skipped, out.Counts.Stale)
		if out.Counts != want {
			return fmt.Errorf("index_build %s counted %+v, want %+v", label, out.Counts, want)
		}
		return nil
	}
	if err := build("from nothing:", career.IndexCounts{Indexed: artifacts}); err != nil {
		return err
	}
	if err := build("nothing changed:", career.IndexCounts{Skipped: artifacts}); err != nil {
		return err
	}
	edited := nOpps / 10
	for i := range edited {
		args := maps(oppArgs[i])
		args["opportunity_id"], args["expected_version"] = oppIDs[i], oppVers[i]
		args["description"] = fmt.Sprintf("Edited: %s", args["description"])
		if err := call(ctx, cs, "opportunity_update", args, nil); err != nil {
			return err
		}
	}
	if err := build(fmt.Sprintf("after %d edits:", edited), career.IndexCounts{Indexed: edited, Skipped: artifacts - edited, Stale: edited}); err != nil {
		return err
	}
	fmt.Fprintln(w)

	for _, strategy := range career.Strategies {
		lat := make([]time.Duration, 0, nMatches)
		statuses := map[string]int{}
		for i := range nMatches {
			var out career.MatchOutput
			t0 := time.Now()
			if err := call(ctx, cs, "match_opportunity", map[string]any{"opportunity_id": oppIDs[i%nOpps], "strategy": strategy}, &out); err != nil {
				return err
			}
			lat = append(lat, time.Since(t0))
			statuses[out.ValidationReport.Status]++
		}
		slices.Sort(lat)
		fmt.Fprintf(w, "match_opportunity %-30s over %d atoms: p50 %6.1f ms  p90 %6.1f ms  p99 %6.1f ms  (validation: %v)\n",
			strategy, atoms, ms(pct(lat, 50)), ms(pct(lat, 90)), ms(pct(lat, 99)), statuses)
	}
	return nil
}

// dynamoEnv is the variable the test command sets to DynamoDB Local's
// endpoint (storetest.DynamoDBEnv, not imported so as not to link test helpers).
const dynamoEnv = "SWITCHBOARD_TEST_DYNAMODB"

// openDynamo creates a table with a random name in the DynamoDB Local at
// $SWITCHBOARD_TEST_DYNAMODB; the returned function deletes it.
func openDynamo(ctx context.Context) (store.Table, func(), error) {
	endpoint := os.Getenv(dynamoEnv)
	if endpoint == "" {
		return nil, nil, fmt.Errorf("-dynamo needs %s set to DynamoDB Local's endpoint", dynamoEnv)
	}
	cfg := aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("switchboard", "bench", "")}
	name := fmt.Sprintf("switchboard-bench-career-%d", time.Now().UnixNano())
	if err := dynamo.CreateTable(ctx, cfg, name); err != nil {
		return nil, nil, fmt.Errorf("creating a table in DynamoDB Local at %s: %w", endpoint, err)
	}
	drop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		dynamo.DeleteTable(ctx, cfg, name)
	}
	return dynamo.New(cfg, name), drop, nil
}

// serve starts the gateway as the local server assembles it, on a free port.
func serve(deps lambdafn.Deps) (string, func(), error) {
	stack, err := local.New(local.Options{Deps: deps, Functions: handlers.All()})
	if err != nil {
		return "", nil, err
	}
	gw, err := gateway.New(gateway.Options{
		Catalog:           catalog.Default(),
		Invoker:           stack,
		Anonymous:         &tenant.Caller{Tenant: tenant.Local, Principal: "local"},
		AllowLocalOrigins: true,
		Logger:            deps.Logger,
	})
	if err != nil {
		return "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: gw.Handler()}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String() + "/mcp", func() { srv.Close() }, nil
}

// call calls tool and decodes its structured content into out (if not nil).
func call(ctx context.Context, cs *mcp.ClientSession, tool string, args map[string]any, out any) error {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return fmt.Errorf("%s: %w", tool, err)
	}
	if res.IsError {
		var msg []string
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				msg = append(msg, t.Text)
			}
		}
		return fmt.Errorf("%s: %s", tool, strings.Join(msg, " "))
	}
	if out == nil {
		return nil
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return err
	}
	return errors.Join(json.Unmarshal(b, out))
}

func maps(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+2)
	for k, v := range m {
		out[k] = v
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func pct(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p/100*float64(len(sorted)) + 0.5)
	return sorted[min(max(i-1, 0), len(sorted)-1)]
}

var (
	skills = []string{"Go", "Python", "Rust", "TypeScript", "Java", "Kotlin", "AWS Lambda", "DynamoDB", "PostgreSQL", "Kafka",
		"Kubernetes", "Terraform", "React", "GraphQL", "gRPC", "Redis", "Elasticsearch", "Spark", "Airflow", "Snowflake",
		"machine learning", "CI/CD", "observability", "security reviews", "incident response"}
	verbs   = []string{"Built", "Designed", "Led", "Migrated", "Scaled", "Automated", "Rewrote", "Introduced", "Owned", "Shipped"}
	objects = []string{"the payments API", "a event ingestion pipeline", "the search service", "the billing platform",
		"a feature store", "the mobile backend", "the data warehouse", "an internal developer platform", "the checkout flow",
		"a fraud detection service", "the notification system", "a recommendation engine"}
	results = []string{"cutting p99 latency by %d%%", "saving $%dk a year", "serving %d million requests a day",
		"reducing incidents by %d%%", "onboarding %d teams", "growing revenue by %d%%"}
	roles     = []string{"Software Engineer", "Senior Engineer", "Staff Engineer", "Tech Lead", "Platform Engineer", "Data Engineer"}
	companies = []string{"Acme", "Globex", "Initech", "Umbrella", "Hooli", "Stark Industries", "Wayne Enterprises", "Tyrell"}
	asks      = []string{"Experience with %s", "%s in production", "Designing systems with %s", "Mentoring engineers on %s", "Operating %s at scale"}
)

func pick[T any](rng *rand.Rand, s []T) T { return s[rng.IntN(len(s))] }

// resume returns a generated Markdown resume: two or three jobs of three to
// five accomplishments, and a skills section.
func resume(rng *rand.Rand, i int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Candidate %03d\n\n## Experience\n", i)
	for range 2 + rng.IntN(2) {
		fmt.Fprintf(&b, "\n### %s, %s\n", pick(rng, roles), pick(rng, companies))
		for range 3 + rng.IntN(3) {
			fmt.Fprintf(&b, "- %s %s with %s and %s, %s.\n", pick(rng, verbs), pick(rng, objects), pick(rng, skills), pick(rng, skills),
				fmt.Sprintf(pick(rng, results), 5+rng.IntN(90)))
		}
	}
	b.WriteString("\n## Skills\n")
	for range 3 {
		fmt.Fprintf(&b, "- %s, %s, %s\n", pick(rng, skills), pick(rng, skills), pick(rng, skills))
	}
	return b.String()
}

// opportunity returns the arguments of a generated opportunity_create.
func opportunity(rng *rand.Rand, i int) map[string]any {
	reqs := make([]any, 4+rng.IntN(4))
	for j := range reqs {
		reqs[j] = fmt.Sprintf(pick(rng, asks), pick(rng, skills))
	}
	return map[string]any{
		"title":        fmt.Sprintf("%s #%d", pick(rng, roles), i),
		"company":      pick(rng, companies),
		"description":  fmt.Sprintf("Work on %s.", pick(rng, objects)),
		"requirements": reqs,
	}
}

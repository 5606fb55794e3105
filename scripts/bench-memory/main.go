// Command bench-memory fires 100 concurrent memory_add_message calls at one
// conversation and checks that nothing was lost: 100 messages stored, with
// sequence numbers 1..100 and no gaps or duplicates (issue #2, "Figures to
// report"). It runs on the embedded table, and also on DynamoDB Local when
// SWITCHBOARD_TEST_DYNAMODB holds its endpoint (the variable
// storetest.DynamoDBEnv names), in a table of its own with a random name that
// it deletes afterwards.
//
// Calls take the real function path: each is an [invoke.Request] envelope
// that the local stack's invoker (package local) hands, as JSON,
// to the Lambda handler of [memoryfn.AddMessage] through
// lambda.Handler.Invoke, with the function's catalog timeout. The handler
// validates, calls memory.Service.AddMessage and appends an audit event. All
// calls are released together by one barrier.
//
// The store is wrapped in a counting decorator, so the figures include how
// many optimistic attempts lost their race and were retried (failed
// transactions of the add), how many compressions lost to a concurrent one
// (failed conditional summary puts) and how many audit puts collided.
//
//	go run ./scripts/bench-memory                   # embedded; -runs 3 -n 100
//	SWITCHBOARD_TEST_DYNAMODB=http://127.0.0.1:8765 go run ./scripts/bench-memory
//
// It is a benchmark, not a test: it prints figures and asserts nothing about
// time. It exits 1 if any call failed or any check found a lost, duplicated
// or misnumbered message.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/audit"
	"github.com/switchboard-dev/switchboard/shared/handlers/memoryfn"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/local"
	"github.com/switchboard-dev/switchboard/shared/memory"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/dynamo"
	"github.com/switchboard-dev/switchboard/shared/store/embedded"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// dynamoEnv is the variable the test command sets to DynamoDB Local's
// endpoint; it is storetest.DynamoDBEnv, not imported so that this program
// does not link the test helpers.
const dynamoEnv = "SWITCHBOARD_TEST_DYNAMODB"

// caller is who every call acts for.
var caller = tenant.Caller{Tenant: "bench", Principal: "bench-memory"}

func main() {
	n := flag.Int("n", 100, "concurrent memory_add_message calls per run")
	runs := flag.Int("runs", 3, "runs per backend, each on a fresh conversation")
	only := flag.String("backend", "", "run only this backend: embedded or dynamo")
	flag.Parse()
	if *n < 1 || *runs < 1 || (*only != "" && *only != "embedded" && *only != "dynamo") {
		fmt.Fprintln(os.Stderr, "bench-memory: -n and -runs must be positive; -backend is embedded or dynamo")
		os.Exit(2)
	}
	if err := run(context.Background(), *n, *runs, *only, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench-memory:", err)
		os.Exit(1)
	}
}

// backend is a table to run on and how to let go of it.
type backend struct {
	name  string
	table store.Table
	close func() error
}

func run(ctx context.Context, n, runs int, only string, w io.Writer) error {
	var backends []backend
	if only == "" || only == "embedded" {
		dir, err := os.MkdirTemp("", "bench-memory-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		tbl, err := embedded.Open(filepath.Join(dir, "switchboard.db"), nil)
		if err != nil {
			return err
		}
		backends = append(backends, backend{name: "embedded", table: tbl, close: tbl.Close})
	}
	endpoint := os.Getenv(dynamoEnv)
	switch {
	case only != "" && only != "dynamo":
	case endpoint == "":
		if only == "dynamo" {
			return fmt.Errorf("-backend dynamo needs %s set to DynamoDB Local's endpoint", dynamoEnv)
		}
		fmt.Fprintf(w, "dynamo: skipped, %s is not set (scripts/test starts DynamoDB Local and sets it)\n", dynamoEnv)
	default:
		b, err := openDynamo(ctx, endpoint, n)
		if err != nil {
			return err
		}
		backends = append(backends, b)
	}

	fmt.Fprintf(w, "bench-memory: %d concurrent memory_add_message calls on one conversation, through invoke.Local -> lambda.Handler.Invoke(memoryfn.AddMessage)\n", n)
	fmt.Fprintf(w, "%s %s/%s, GOMAXPROCS=%d, NumCPU=%d\n\n", runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0), runtime.NumCPU())
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "backend\trun\tok\twall\tp50/call\tp99/call\tmax/call\tattempts\tretries\tmax retries/call\tlost compressions\taudit collisions\tstored\tseq 1..n\taudit events\tsummarized through\t")
	var failures []string
	for _, b := range backends {
		for r := 1; r <= runs; r++ {
			res, err := once(ctx, b, n, r)
			if err != nil {
				failures = append(failures, fmt.Sprintf("%s run %d: %v", b.name, r, err))
			}
			if res != nil {
				res.row(tw, b.name, r, n)
			}
		}
	}
	tw.Flush()
	var errs []error
	for _, b := range backends {
		if err := b.close(); err != nil {
			errs = append(errs, fmt.Errorf("closing %s: %w", b.name, err))
		}
	}
	if len(failures) > 0 {
		fmt.Fprintln(w)
		for _, f := range failures {
			fmt.Fprintln(w, "FAILED", f)
		}
		errs = append(errs, fmt.Errorf("%d of %d runs failed their checks", len(failures), runs*len(backends)))
	}
	return errors.Join(errs...)
}

// openDynamo creates a table with a random name in the DynamoDB Local at
// endpoint; closing the backend deletes it. Its HTTP client keeps up to 2n idle
// connections, so that a burst of n calls does not end in n redials.
func openDynamo(ctx context.Context, endpoint string, n int) (backend, error) {
	cfg := aws.Config{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider("switchboard", "bench", ""),
		HTTPClient: awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
			tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 2*n+16, 2*n
		}),
	}
	name := "switchboard-bench-" + randomHex(6)
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := dynamo.CreateTable(cctx, cfg, name); err != nil {
		return backend{}, fmt.Errorf("creating a table in DynamoDB Local at %s: %w", endpoint, err)
	}
	del := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return dynamo.DeleteTable(ctx, cfg, name)
	}
	return backend{name: "dynamo", table: dynamo.New(cfg, name), close: del}, nil
}

// result is what one run measured and found.
type result struct {
	ok        int
	wall      time.Duration
	lat       []time.Duration
	counts    snapshot
	maxRetry  int64
	stored    int
	seqOK     bool
	auditOK   int
	summaryTo int64
}

func (r *result) row(w io.Writer, name string, run, n int) {
	slices.Sort(r.lat)
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }
	seq := "ok"
	if !r.seqOK {
		seq = "BROKEN"
	}
	var maxLat time.Duration
	if len(r.lat) > 0 {
		maxLat = r.lat[len(r.lat)-1]
	}
	fmt.Fprintf(w, "%s\t%d\t%d/%d\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%d\t%d\t\n",
		name, run, r.ok, n, ms(r.wall), ms(percentile(r.lat, 50)), ms(percentile(r.lat, 99)), ms(maxLat),
		r.counts.transacts, r.counts.transactsLost, r.maxRetry, r.counts.summaryLost, r.counts.auditLost,
		r.stored, seq, r.auditOK, r.summaryTo)
}

// once runs n concurrent adds on a fresh conversation in b and checks the outcome.
func once(ctx context.Context, b backend, n, run int) (*result, error) {
	tbl := &countingTable{Table: b.table}
	deps := lambdafn.Deps{Table: tbl, Summarizer: offline.Summarizer{}}
	inv, err := local.New(local.Options{Deps: deps, Functions: []lambdafn.Function{memoryfn.GetOrCreate, memoryfn.AddMessage}})
	if err != nil {
		return nil, err
	}

	conv := fmt.Sprintf("bench-memory-%d-%s", run, randomHex(4))
	trace := "bench-memory-" + randomHex(8)
	if _, err := call(ctx, inv, memoryfn.GetOrCreate.Path, "memory_get_or_create", map[string]any{"conversation_id": conv}, trace); err != nil {
		return nil, fmt.Errorf("memory_get_or_create: %w", err)
	}
	trace = "bench-memory-" + randomHex(8) // the adds' own trace, so its audit events are exactly theirs
	tbl.reset()

	contents := make([]string, n)
	for i := range contents {
		contents[i] = fmt.Sprintf("message %d of run %d: how often should I replace my toothbrush?", i+1, run)
	}
	var (
		res   = &result{lat: make([]time.Duration, 0, n)}
		mu    sync.Mutex
		seqs  []int64
		errs  []error
		wg    sync.WaitGroup
		ready sync.WaitGroup
		start = make(chan struct{})
	)
	ready.Add(n)
	for i := range n {
		wg.Go(func() {
			stats := &callStats{}
			cctx := context.WithValue(ctx, callKey{}, stats)
			role := []string{"user", "assistant"}[i%2]
			args := map[string]any{"conversation_id": conv, "role": role, "content": contents[i]}
			ready.Done()
			<-start
			t0 := time.Now()
			out, err := call(cctx, inv, memoryfn.AddMessage.Path, "memory_add_message", args, trace)
			d := time.Since(t0)
			var add memory.AddMessageOutput
			if err == nil {
				err = json.Unmarshal(out, &add)
			}
			mu.Lock()
			defer mu.Unlock()
			res.maxRetry = max(res.maxRetry, stats.retries.Load())
			if err != nil {
				errs = append(errs, fmt.Errorf("call %d: %w", i+1, err))
				return
			}
			res.ok++
			res.lat = append(res.lat, d)
			seqs = append(seqs, add.Seq)
		})
	}
	ready.Wait()
	t0 := time.Now()
	close(start)
	wg.Wait()
	res.wall = time.Since(t0)
	res.counts = tbl.snapshot()

	var problems []error
	if len(errs) > 0 {
		problems = append(problems, fmt.Errorf("%d calls failed, first: %w", len(errs), errs[0]))
	}
	slices.Sort(seqs)
	if !isOneToN(seqs, len(seqs)) {
		problems = append(problems, fmt.Errorf("the calls were handed seqs %v, want 1..%d once each", compact(seqs), len(seqs)))
	}

	// What is stored: read back through the domain service, past the counting decorator.
	svc := memory.New(b.table, nil)
	all, err := svc.GetAllMessages(ctx, caller, memory.GetAllMessagesInput{ConversationID: conv, Limit: memory.MaxPageMessages})
	if err != nil {
		return res, errors.Join(append(problems, fmt.Errorf("reading the messages back: %w", err))...)
	}
	res.stored = len(all.Messages)
	stored := make([]int64, len(all.Messages))
	var got []string
	for i, m := range all.Messages {
		stored[i] = m.Seq
		got = append(got, m.Content)
	}
	res.seqOK = isOneToN(stored, n) && all.NextCursor == ""
	if !res.seqOK {
		problems = append(problems, fmt.Errorf("stored seqs %v, want 1..%d in order", compact(stored), n))
	}
	slices.Sort(got)
	want := slices.Clone(contents)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		problems = append(problems, errors.New("the stored contents are not exactly the contents sent, once each"))
	}
	full, err := svc.Conversation(ctx, caller, conv)
	if err != nil {
		problems = append(problems, fmt.Errorf("reading the conversation: %w", err))
	} else if full.TotalCount != int64(n) {
		problems = append(problems, fmt.Errorf("the conversation counts %d messages, want %d", full.TotalCount, n))
	}
	sum, err := svc.GetSummary(ctx, caller, memory.ConversationInput{ConversationID: conv})
	if err != nil {
		problems = append(problems, fmt.Errorf("reading the summary: %w", err))
	}
	res.summaryTo = sum.Through

	// Every add appended one audit event to the adds' trace, and only they did.
	events, next, err := audit.New(b.table, nil).Trace(ctx, caller.Tenant, trace, "", store.MaxQueryLimit)
	if err != nil {
		problems = append(problems, fmt.Errorf("reading the audit trace: %w", err))
	}
	for _, e := range events {
		if e.Tool == "memory_add_message" && e.Outcome == "ok" {
			res.auditOK++
		}
	}
	if res.auditOK != n || len(events) != n || next != "" {
		problems = append(problems, fmt.Errorf("the audit trace holds %d events, %d of them ok adds; want %d", len(events), res.auditOK, n))
	}
	return res, errors.Join(problems...)
}

// call invokes function with a tools/call envelope and returns the result's
// structured content, or an error if the function failed or the tool did.
func call(ctx context.Context, inv invoke.Invoker, function, tool string, args map[string]any, trace string) (json.RawMessage, error) {
	a, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	resp, err := inv.Invoke(ctx, function, &invoke.Request{
		Method: invoke.MethodCallTool, Tool: tool, Arguments: a,
		Caller: caller, RequestID: randomHex(16), TraceID: trace,
	})
	if err != nil {
		return nil, err
	}
	if resp.Error != nil {
		return nil, fmt.Errorf("%s: %s (%s)", resp.Error.Kind, resp.Error.Message, resp.Error.Field)
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(resp.Result, &res); err != nil {
		return nil, fmt.Errorf("undecodable result: %w", err)
	}
	if res.IsError {
		return nil, fmt.Errorf("tool error: %s", resp.Result)
	}
	sc, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return nil, err
	}
	return sc, nil
}

// isOneToN reports whether s is exactly 1, 2, ..., n.
func isOneToN(s []int64, n int) bool {
	if len(s) != n {
		return false
	}
	for i, v := range s {
		if v != int64(i+1) {
			return false
		}
	}
	return true
}

// compact shows a sorted seq list as ranges, such as [1-47 49-101].
func compact(s []int64) string {
	var parts []string
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		if i == j {
			parts = append(parts, fmt.Sprint(s[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", s[i], s[j]))
		}
		i = j + 1
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p/100*float64(len(sorted)) + 0.5)
	return sorted[min(max(i-1, 0), len(sorted)-1)]
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// callStats counts one call's lost races; the call's context carries it
// down to the counting table.
type callStats struct{ retries atomic.Int64 }

type callKey struct{}

// countingTable is a [store.Table] that counts the writes made through it
// and how many lost their race. In this workload only memory.AddMessage
// transacts (meta bump plus message), the compression puts the summary, and
// audit puts events under the trace partitions.
type countingTable struct {
	store.Table
	transacts, transactsLost atomic.Int64
	summaryPuts, summaryLost atomic.Int64
	auditPuts, auditLost     atomic.Int64
}

// snapshot is a copy of a countingTable's counts.
type snapshot struct {
	transacts, transactsLost int64
	summaryPuts, summaryLost int64
	auditPuts, auditLost     int64
}

func lostRace(err error) bool {
	return errors.Is(err, store.ErrConditionFailed) || errors.Is(err, store.ErrConflict)
}

// Transact implements [store.Table].
func (t *countingTable) Transact(ctx context.Context, writes ...store.Write) error {
	err := t.Table.Transact(ctx, writes...)
	t.transacts.Add(1)
	if lostRace(err) {
		t.transactsLost.Add(1)
		if s, ok := ctx.Value(callKey{}).(*callStats); ok {
			s.retries.Add(1)
		}
	}
	return err
}

// Put implements [store.Table].
func (t *countingTable) Put(ctx context.Context, it store.Item, c store.Condition) error {
	err := t.Table.Put(ctx, it, c)
	total, lost := &t.summaryPuts, &t.summaryLost
	if strings.Contains(it.PK, "#trace#") { // audit's partition, see package audit
		total, lost = &t.auditPuts, &t.auditLost
	}
	total.Add(1)
	if lostRace(err) {
		lost.Add(1)
	}
	return err
}

func (t *countingTable) reset() {
	for _, c := range []*atomic.Int64{&t.transacts, &t.transactsLost, &t.summaryPuts, &t.summaryLost, &t.auditPuts, &t.auditLost} {
		c.Store(0)
	}
}

func (t *countingTable) snapshot() snapshot {
	return snapshot{
		transacts: t.transacts.Load(), transactsLost: t.transactsLost.Load(),
		summaryPuts: t.summaryPuts.Load(), summaryLost: t.summaryLost.Load(),
		auditPuts: t.auditPuts.Load(), auditLost: t.auditLost.Load(),
	}
}

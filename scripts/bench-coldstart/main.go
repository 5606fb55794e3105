// Command bench-coldstart measures the gateway's cold start: it builds the
// gateway's bootstrap for this machine with the Lambda flags, then N times
// execs it against an in-process Lambda Runtime API (shared/lambdatest) and
// times exec to the first answered event, an MCP initialize request. It also
// builds every function for linux/arm64 and prints their sizes. The targets
// (issue 2) are 50 ms and 25 MB.
//
//	go run ./scripts/bench-coldstart [-n 20] [-table dynamodb|file] [-inittrace] [-baseline DIR]
//
// With -table dynamodb (the default) the gateway is configured as on AWS, with
// a DynamoDB table name and an endpoint it never reaches (neither init nor an
// anonymous initialize touches the table); with -table file it opens an
// embedded table file, as the bootstrap tests do. -inittrace runs the
// bootstrap once more with GODEBUG=inittrace=1 and lists the package
// initialisers that cost the most. -baseline DIR builds the gateway of
// another checkout too (a worktree of main, say) and alternates the two
// bootstraps' runs, so that a change is measured against its baseline under
// the same load: on a shared machine, figures taken minutes apart differ
// more than most changes do.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
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

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/deploy"
	"github.com/switchboard-dev/switchboard/shared/elicit"
	"github.com/switchboard-dev/switchboard/shared/lambdatest"
)

// Targets from issue 2.
const (
	targetColdStart = 50 * time.Millisecond
	targetSize      = 25 << 20
)

var buildFlags = []string{"-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w"}

func main() {
	n := flag.Int("n", 20, "cold starts to measure")
	table := flag.String("table", "dynamodb", "the gateway's table: dynamodb (as on AWS, never reached) or file (embedded)")
	inittrace := flag.Bool("inittrace", false, "also run once with GODEBUG=inittrace=1 and list the costliest package initialisers")
	baseline := flag.String("baseline", "", "`dir`ectory of another checkout whose gateway to measure too, alternating runs with this one's")
	flag.Parse()
	if err := run(*n, *table, *inittrace, *baseline); err != nil {
		fmt.Fprintln(os.Stderr, "bench-coldstart:", err)
		os.Exit(1)
	}
}

func run(n int, table string, inittrace bool, baseline string) error {
	if _, err := os.Stat("go.mod"); err != nil {
		return fmt.Errorf("run it from the repository root: %w", err)
	}
	dir, err := os.MkdirTemp("", "bench-coldstart")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	gateway := filepath.Join(dir, runtime.GOOS+"_"+runtime.GOARCH, "gateway", "bootstrap")
	if err := build(".", runtime.GOOS, runtime.GOARCH, gateway, "./functions/"+deploy.GatewayPath); err != nil {
		return err
	}
	bins := []bootstrap{{"this tree", gateway}}
	if baseline != "" {
		b := filepath.Join(dir, "baseline", "gateway", "bootstrap")
		if err := build(baseline, runtime.GOOS, runtime.GOARCH, b, "./functions/"+deploy.GatewayPath); err != nil {
			return fmt.Errorf("baseline: %w", err)
		}
		bins = append(bins, bootstrap{"baseline " + baseline, b})
	}
	event, err := os.ReadFile(filepath.FromSlash(deploy.EventsDir + "/" + deploy.GatewayPath + "/initialize.json"))
	if err != nil {
		return fmt.Errorf("%w (run go run ./scripts/generate)", err)
	}

	fmt.Printf("Cold start of the gateway bootstrap (%s/%s, %d CPUs, load average %s), exec to the answer of initialize, %d runs, table %s:\n",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), loadAverage(), n, table)
	times := make([]timings, len(bins))
	for i := range n {
		env, err := gatewayEnv(dir, table, i)
		if err != nil {
			return err
		}
		// Alternate which bootstrap goes first, so neither always runs
		// right after the other.
		for k := range bins {
			j := (i + k) % len(bins)
			tot, ini, fst, err := coldStart(bins[j].path, env, event)
			if err != nil {
				return fmt.Errorf("%s, run %d: %w", bins[j].name, i+1, err)
			}
			t := &times[j]
			t.total, t.init, t.first = append(t.total, tot), append(t.init, ini), append(t.first, fst)
		}
	}
	for j, b := range bins {
		t := times[j]
		if len(bins) > 1 {
			fmt.Printf(" %s:\n", b.name)
		}
		fmt.Printf("  exec -> answer  p50 %-9v p90 %-9v min %v\n", pct(t.total, 50), pct(t.total, 90), slices.Min(t.total))
		fmt.Printf("  exec -> ready   p50 %-9v p90 %-9v min %v   (process start and init, until it asks for the event)\n", pct(t.init, 50), pct(t.init, 90), slices.Min(t.init))
		fmt.Printf("  ready -> answer p50 %-9v p90 %-9v min %v   (the first event)\n", pct(t.first, 50), pct(t.first, 90), slices.Min(t.first))
	}
	fmt.Printf("  target %v: %s\n", targetColdStart, verdict(pct(times[0].total, 50) <= targetColdStart))

	fmt.Println("\nBinary sizes, linux/arm64, -tags lambda.norpc -trimpath -ldflags='-s -w':")
	largest := int64(0)
	for _, f := range deploy.Functions(catalog.Default()) {
		bin := filepath.Join(dir, "linux_arm64", filepath.FromSlash(f.Path), "bootstrap")
		if err := build(".", "linux", "arm64", bin, "./functions/"+f.Path); err != nil {
			return err
		}
		info, err := os.Stat(bin)
		if err != nil {
			return err
		}
		largest = max(largest, info.Size())
		fmt.Printf("  %-30s %6.1f MB\n", f.Path, float64(info.Size())/(1<<20))
	}
	if baseline != "" {
		bin := filepath.Join(dir, "baseline", "linux_arm64", "gateway", "bootstrap")
		if err := build(baseline, "linux", "arm64", bin, "./functions/"+deploy.GatewayPath); err != nil {
			return fmt.Errorf("baseline: %w", err)
		}
		info, err := os.Stat(bin)
		if err != nil {
			return err
		}
		fmt.Printf("  %-30s %6.1f MB\n", "gateway (baseline)", float64(info.Size())/(1<<20))
	}
	fmt.Printf("  target %d MB: %s\n", targetSize>>20, verdict(largest <= targetSize))

	if inittrace {
		return traceInit(gateway, dir, table, event)
	}
	return nil
}

// bootstrap is a gateway binary to measure.
type bootstrap struct{ name, path string }

// timings are one bootstrap's cold starts.
type timings struct{ total, init, first []time.Duration }

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

// gatewayEnv is the environment of the gateway in Lambda, with dummy
// credentials and endpoints that are never reached.
func gatewayEnv(dir, table string, run int) ([]string, error) {
	env := []string{
		"AWS_LAMBDA_FUNCTION_NAME=switchboard-gateway",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE=1024",
		"AWS_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=AKIDBENCH",
		"AWS_SECRET_ACCESS_KEY=bench",
		"AWS_EC2_METADATA_DISABLED=true",
		"AWS_CONFIG_FILE=" + os.DevNull,
		"AWS_SHARED_CREDENTIALS_FILE=" + os.DevNull,
		"AWS_ENDPOINT_URL_LAMBDA=http://127.0.0.1:9",
		config.EnvFunctionPrefix + "=switchboard-",
		config.EnvAnonymousTenant + "=" + deploy.SampleTenant,
		config.EnvRequestStateKeys + `={"k1":"` + elicit.NewSecret() + `"}`,
	}
	switch table {
	case "dynamodb":
		env = append(env, config.EnvTable+"=switchboard-Table-BENCH", "AWS_ENDPOINT_URL_DYNAMODB=http://127.0.0.1:9")
	case "file":
		env = append(env, config.EnvTable+"="+config.FilePrefix+filepath.Join(dir, fmt.Sprintf("run%d", run), "t.db"))
	default:
		return nil, fmt.Errorf("-table %q: want dynamodb or file", table)
	}
	return env, nil
}

// coldStart execs the bootstrap and returns the times from exec to the
// answer, from exec to the runtime handing over the event (init done), and
// from then to the answer.
func coldStart(bin string, env []string, event []byte) (total, init, first time.Duration, err error) {
	rt := lambdatest.NewRuntime(nil)
	defer rt.Close()
	p, err := lambdatest.Start(rt, bin, env)
	if err != nil {
		return 0, 0, 0, err
	}
	defer p.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := p.Invoke(ctx, event)
	if err != nil {
		return 0, 0, 0, err
	}
	if res.Error != nil || !strings.Contains(string(res.Payload), `"statusCode":200`) {
		return 0, 0, 0, fmt.Errorf("initialize failed: %v %s\n%s", res.Error, res.Payload, p.Output())
	}
	return res.Answered.Sub(p.Started()), res.Received.Sub(p.Started()), res.Answered.Sub(res.Received), nil
}

// traceInit runs the bootstrap once with GODEBUG=inittrace=1 and prints the
// package initialisers that took longest.
func traceInit(bin, dir, table string, event []byte) error {
	env, err := gatewayEnv(dir, table, -1)
	if err != nil {
		return err
	}
	rt := lambdatest.NewRuntime(nil)
	defer rt.Close()
	p, err := lambdatest.Start(rt, bin, append(env, "GODEBUG=inittrace=1"))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := p.Invoke(ctx, event); err != nil {
		return err
	}
	p.Stop()
	// init github.com/x/y @1.2 ms, 0.31 ms clock, 12345 bytes, 67 allocs
	re := regexp.MustCompile(`^init (\S+) @([\d.]+) ms, ([\d.]+) ms clock, (\d+) bytes, (\d+) allocs`)
	type pkgInit struct {
		name         string
		clock, start float64
		bytes        int
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
		start, _ := strconv.ParseFloat(m[2], 64)
		b, _ := strconv.Atoi(m[4])
		inits = append(inits, pkgInit{m[1], clock, start, b})
		sum += clock
	}
	sort.Slice(inits, func(i, j int) bool { return inits[i].clock > inits[j].clock })
	fmt.Printf("\nPackage initialisers (GODEBUG=inittrace=1): %d packages, %.2f ms in total; the costliest:\n", len(inits), sum)
	for _, in := range inits[:min(12, len(inits))] {
		fmt.Printf("  %7.2f ms  %8d B  %s\n", in.clock, in.bytes, in.name)
	}
	if len(inits) > 0 {
		last := inits[0]
		for _, in := range inits {
			if in.start > last.start {
				last = in
			}
		}
		fmt.Printf("  last initialiser started %.2f ms after the runtime started\n", last.start)
	}
	return nil
}

func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[max(0, min(len(s)-1, i-1))].Round(100 * time.Microsecond)
}

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

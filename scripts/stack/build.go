package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"
)

// buildCommand returns the environment and arguments of the go build that
// the Makefile's build-<id> target runs for SAM (BuildMethod: makefile), for
// this machine's architecture, writing the bootstrap to out. It refuses a
// target that is not a go build with -tags lambda.norpc for linux: the stack
// runs what sam build would build, only for the host's GOARCH.
func buildCommand(makefile []byte, id, out string) (env, args []string, err error) {
	lines := strings.Split(string(makefile), "\n")
	i := slices.Index(lines, "build-"+id+":")
	if i < 0 || i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "\t") {
		return nil, nil, fmt.Errorf("the Makefile has no build-%s target", id)
	}
	words, err := shellWords(strings.TrimSpace(lines[i+1]))
	if err != nil {
		return nil, nil, fmt.Errorf("build-%s: %w", id, err)
	}
	for len(words) > 0 && strings.Contains(words[0], "=") {
		k, v, _ := strings.Cut(words[0], "=")
		if k == "GOARCH" {
			v = runtime.GOARCH
		}
		env = append(env, k+"="+v)
		words = words[1:]
	}
	if len(words) < 2 || words[0] != "go" || words[1] != "build" {
		return nil, nil, fmt.Errorf("build-%s runs %q, not go build", id, lines[i+1])
	}
	if !slices.Contains(env, "GOOS=linux") || !slices.Contains(words, "lambda.norpc") {
		return nil, nil, fmt.Errorf("build-%s does not build for linux with -tags lambda.norpc: %q", id, lines[i+1])
	}
	for _, w := range words[2:] {
		args = append(args, strings.ReplaceAll(w, "$(ARTIFACTS_DIR)/bootstrap", out))
	}
	if !slices.Contains(args, out) {
		return nil, nil, fmt.Errorf("build-%s does not write $(ARTIFACTS_DIR)/bootstrap", id)
	}
	return env, append([]string{"build"}, args...), nil
}

// shellWords splits a recipe line into words as sh would, for the quoting
// the Makefile uses: single quotes, and double quotes without escapes.
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, c := range s {
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteRune(c)
			}
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(c)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated quote in %q", s)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// buildJob is one bootstrap to build: go with args, and env added.
type buildJob struct {
	name      string
	env, args []string
}

// buildJobs returns the Makefile's builds of fns' bootstraps, into
// dir/<LogicalID>/bootstrap, and their paths by logical id. With
// conformance, the front door's functions (the gateway) are built with the
// conformance tag too, and the fixtures' bootstrap (scripts/stack/fixtures)
// is built as the gateway is, into dir/fixtures/bootstrap.
func buildJobs(makefile []byte, fns []*Function, dir string, conformance bool) ([]buildJob, map[string]string, error) {
	paths := map[string]string{}
	var jobs []buildJob
	for _, f := range fns {
		out := filepath.Join(dir, f.LogicalID, "bootstrap")
		env, args, err := buildCommand(makefile, f.LogicalID, out)
		if err != nil {
			return nil, nil, err
		}
		if conformance && len(f.HTTP) > 0 {
			args = withTag(args, "conformance")
			fixtures := filepath.Join(dir, "fixtures", "bootstrap")
			fargs := slices.Clone(args)
			fargs[slices.Index(fargs, out)] = fixtures
			fargs[len(fargs)-1] = "./scripts/stack/fixtures"
			jobs = append(jobs, buildJob{"fixtures", env, fargs})
			paths["fixtures"] = fixtures
		}
		paths[f.LogicalID] = out
		jobs = append(jobs, buildJob{f.LogicalID, env, args})
	}
	return jobs, paths, nil
}

// withTag adds tag to the -tags of go build args.
func withTag(args []string, tag string) []string {
	args = slices.Clone(args)
	if i := slices.Index(args, "-tags"); i >= 0 && i+1 < len(args) {
		args[i+1] += "," + tag
	}
	return args
}

// buildAll runs jobs, as many at once as there are CPUs.
func buildAll(ctx context.Context, jobs []buildJob) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.NumCPU())
	for _, j := range jobs {
		g.Go(func() error {
			cmd := exec.CommandContext(ctx, "go", j.args...)
			cmd.Env = append(os.Environ(), j.env...)
			if b, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("building %s: %w\n%s", j.name, err, b)
			}
			return nil
		})
	}
	return g.Wait()
}

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

// buildAll builds every function's bootstrap into dir/<LogicalID>/bootstrap,
// as many at once as there are CPUs, and returns their paths by logical id.
func buildAll(ctx context.Context, makefile []byte, fns []*Function, dir string) (map[string]string, error) {
	paths := map[string]string{}
	type job struct {
		id        string
		env, args []string
	}
	var jobs []job
	for _, f := range fns {
		out := filepath.Join(dir, f.LogicalID, "bootstrap")
		env, args, err := buildCommand(makefile, f.LogicalID, out)
		if err != nil {
			return nil, err
		}
		paths[f.LogicalID] = out
		jobs = append(jobs, job{f.LogicalID, env, args})
	}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.NumCPU())
	for _, j := range jobs {
		g.Go(func() error {
			cmd := exec.CommandContext(ctx, "go", j.args...)
			cmd.Env = append(os.Environ(), j.env...)
			if b, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("building %s: %w\n%s", j.id, err, b)
			}
			return nil
		})
	}
	return paths, g.Wait()
}

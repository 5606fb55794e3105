package localfs_test

import (
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/localfs"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
)

func TestBlobs(t *testing.T) {
	storetest.RunBlobs(t, storetest.OpenLocalFS(t))
}

func open(t *testing.T, dir string) *localfs.Blobs {
	t.Helper()
	b := localfs.New(dir)
	t.Cleanup(func() { b.Close() })
	return b
}

func listKeys(t *testing.T, b store.Blobs, prefix string) []string {
	t.Helper()
	var keys []string
	for _, info := range storetest.ListAllBlobs(t, b, prefix) {
		keys = append(keys, info.Key)
	}
	return keys
}

func TestNewDoesNoIO(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "not", "yet")
	b := open(t, dir)
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("New created %s (stat error %v)", dir, err)
	}
	if _, err := b.Put(context.Background(), "k", []byte("v"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("first Put did not create the folder: %v", err)
	}
}

func TestKeysStayInsideTheRoot(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	dir := filepath.Join(base, "blobs")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{dir, outside} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// A symbolic link inside the root that points out of it, as a careless
	// operator (or an attacker with access to the folder) might leave.
	if err := os.Symlink(outside, filepath.Join(dir, "escape")); err != nil {
		t.Fatal(err)
	}
	b := open(t, dir)
	for _, key := range []string{"../outside/x", "escape/x"} {
		if _, err := b.Put(ctx, key, []byte("x"), nil); err == nil {
			t.Errorf("Put(%q) succeeded", key)
		}
	}
	ents, err := os.ReadDir(outside)
	if err != nil || len(ents) != 0 {
		t.Fatalf("the folder outside the root holds %v (err %v), want nothing", ents, err)
	}
	if got := listKeys(t, b, ""); len(got) != 0 {
		t.Errorf("List shows %v through a symbolic link", got)
	}
}

func TestListingShowsOnlyObjects(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	b := open(t, dir)
	for _, k := range []string{"a/b", "a/c"} {
		if _, err := b.Put(ctx, k, []byte(k), nil); err != nil {
			t.Fatal(err)
		}
	}
	// Files a crashed writer or a person might leave in the folder.
	for name, data := range map[string]string{
		"~tmp/0123abcd":  "half-written",
		"a/~tmp-1":       "a stray temporary file",
		"a/notes.txt":    "no object suffix",
		"a/UPPER~":       "upper case is never written",
		"a/%2F~":         "upper-case hex is never written",
		"a/%2f~":         "a slash cannot be in a segment",
		"a/%5c~":         "nor a backslash",
		"a/.~":           "nor can a segment be a dot",
		"a/..~":          "or two",
		"a/%c3~":         "nor half a UTF-8 character",
		"a/b%zz~":        "bad escape",
		"~junk/x~":       "a folder name that cannot be a key",
		"a/c~.swp":       "an editor's swap file",
		"a/d~":           "", // a file without the metadata line
		"z/only-a-dir/.": "",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/.") {
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// The corrupt object a/d~ is listed as a failure, not skipped silently:
	// it looks like an object. Remove it, then the rest must be invisible.
	if _, err := b.List(ctx, "a/", nil); err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Errorf("List over a corrupt object file: error = %v, want one saying corrupt", err)
	}
	if _, err := b.Head(ctx, "a/d"); err == nil || errors.Is(err, store.ErrNotFound) {
		t.Errorf("Head of a corrupt object file: error = %v, want a corruption error", err)
	}
	os.Remove(filepath.Join(dir, "a", "d~"))
	if diff := cmp.Diff([]string{"a/b", "a/c"}, listKeys(t, b, "")); diff != "" {
		t.Errorf("List mismatch (-want +got):\n%s", diff)
	}
}

func TestNamesAreSafeOnCaseInsensitiveFileSystems(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	b := open(t, dir)
	keys := []string{"Readme", "README", "readme", "Résumé.pdf", "Re\u0301sume\u0301.pdf", "100% ~ +"}
	for _, k := range keys {
		if _, err := b.Put(ctx, "t/"+k, []byte(k), nil); err != nil {
			t.Fatal(err)
		}
	}
	ents, err := os.ReadDir(filepath.Join(dir, "t"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, e := range ents {
		name := e.Name()
		if strings.ToLower(name) != name || strings.IndexFunc(name, func(r rune) bool { return r > 0x7e }) >= 0 {
			t.Errorf("file name %q has upper case or non-ASCII bytes", name)
		}
		if prev, ok := seen[strings.ToLower(name)]; ok {
			t.Errorf("file names %q and %q collide when case is ignored", prev, name)
		}
		seen[strings.ToLower(name)] = name
	}
	for _, k := range keys {
		rc, _, err := b.Get(ctx, "t/"+k, nil)
		if err != nil {
			t.Fatalf("Get(%q): %v", k, err)
		}
		data, _ := io.ReadAll(rc)
		rc.Close()
		if string(data) != k {
			t.Errorf("Get(%q) = %q", k, data)
		}
	}
}

func TestLongSegmentsAreRejected(t *testing.T) {
	b := open(t, t.TempDir())
	ctx := context.Background()
	ok := strings.Repeat("k", localfs.MaxSegmentBytes)
	if _, err := b.Put(ctx, "a/"+ok, nil, nil); err != nil {
		t.Fatalf("Put with a %d-byte segment: %v", len(ok), err)
	}
	for _, key := range []string{"a/" + ok + "k", strings.Repeat("É", 100) + "/x"} {
		if _, err := b.Put(ctx, key, nil, nil); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("Put with a segment too long to be a file name: error = %v, want ErrInvalid", err)
		}
	}
}

func TestAReaderKeepsTheVersionItOpened(t *testing.T) {
	ctx := context.Background()
	b := open(t, t.TempDir())
	if _, err := b.Put(ctx, "k", []byte("old content"), nil); err != nil {
		t.Fatal(err)
	}
	rc, _, err := b.Get(ctx, "k", &store.GetOptions{Offset: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if _, err := b.Put(ctx, "k", []byte("new!"), nil); err != nil {
		t.Fatal(err)
	}
	if err := b.Delete(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if data, err := io.ReadAll(rc); err != nil || string(data) != "content" {
		t.Errorf("reading after replace and delete = %q, %v; want %q", data, err, "content")
	}
}

func TestStaleTempFilesAreSwept(t *testing.T) {
	dir := t.TempDir()
	tmp := filepath.Join(dir, "~tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	old, fresh := filepath.Join(tmp, "old"), filepath.Join(tmp, "fresh")
	for _, p := range []string{old, fresh} {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(old, long, long); err != nil {
		t.Fatal(err)
	}
	if err := open(t, dir).Init(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a two-day-old temporary file survived Init (stat error %v)", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("Init removed a fresh temporary file another process may be writing: %v", err)
	}
}

func TestClosedBlobsFail(t *testing.T) {
	b := localfs.New(t.TempDir())
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Head(context.Background(), "k"); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Head after Close: error = %v, want one saying closed", err)
	}
}

// helperEnv, when set, makes the test binary a writer process for
// TestIfAbsentAcrossProcesses instead of running tests.
const helperEnv = "LOCALFS_TEST_IFABSENT_WRITER"

func TestMain(m *testing.M) {
	if spec := os.Getenv(helperEnv); spec != "" {
		os.Exit(writer(spec))
	}
	os.Exit(m.Run())
}

// writer waits for the start file, then puts its id at key if absent and
// prints "won" or "lost".
func writer(spec string) int {
	dir, id, _ := strings.Cut(spec, "|")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "start")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			fmt.Println("timed out waiting to start")
			return 2
		}
	}
	b := localfs.New(filepath.Join(dir, "blobs"))
	defer b.Close()
	_, err := b.Put(context.Background(), "race/key", []byte(id), &store.PutOptions{IfAbsent: true})
	switch {
	case err == nil:
		fmt.Println("won")
	case errors.Is(err, store.ErrConditionFailed):
		fmt.Println("lost")
	default:
		fmt.Println(err)
		return 1
	}
	return 0
}

func TestIfAbsentAcrossProcesses(t *testing.T) {
	const writers = 8
	for round := 0; round < 3; round++ {
		dir := t.TempDir()
		if err := localfs.New(filepath.Join(dir, "blobs")).Init(context.Background()); err != nil {
			t.Fatal(err)
		}
		cmds := make([]*exec.Cmd, writers)
		outs := make([]strings.Builder, writers)
		for i := range cmds {
			cmds[i] = exec.Command(os.Args[0], "-test.run=^$")
			cmds[i].Env = append(os.Environ(), fmt.Sprintf("%s=%s|writer %d", helperEnv, dir, i))
			cmds[i].Stdout = &outs[i]
			cmds[i].Stderr = &outs[i]
			if err := cmds[i].Start(); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "start"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		var results []string
		winner := ""
		for i, cmd := range cmds {
			if err := cmd.Wait(); err != nil {
				t.Fatalf("writer %d: %v: %s", i, err, outs[i].String())
			}
			out := strings.TrimSpace(outs[i].String())
			results = append(results, out)
			if out == "won" {
				winner = fmt.Sprintf("writer %d", i)
			}
		}
		if n := strings.Count(strings.Join(results, " "), "won"); n != 1 {
			t.Fatalf("round %d: %d processes won, want 1: %v", round, n, results)
		}
		b := open(t, filepath.Join(dir, "blobs"))
		rc, _, err := b.Get(context.Background(), "race/key", nil)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(rc)
		rc.Close()
		if string(data) != winner {
			t.Errorf("round %d: object holds %q, but %s won", round, data, winner)
		}
		if diff := cmp.Diff([]string{"race/key"}, listKeys(t, b, ""), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("round %d: listing mismatch (-want +got):\n%s", round, diff)
		}
		leftovers, _ := os.ReadDir(filepath.Join(dir, "blobs", "~tmp"))
		if len(leftovers) != 0 {
			t.Errorf("round %d: %d temporary files left behind", round, len(leftovers))
		}
	}
}

func TestAPlainFileIsReadAtItsKeysPath(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	b := open(t, dir)
	for name, data := range map[string]string{
		"tenants/local/docs/Guide One.md": "# Guide\n\nHello.",
		"tenants/local/docs/shadowed.md":  "the plain file",
		"tenants/local/file":              "a file where a folder is expected",
		"tenants/local/dir/inner.md":      "x",
		"tenants/local/tilde~":            "a name with a tilde",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.Put(ctx, "tenants/local/docs/shadowed.md", []byte("the object"), nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, key, want string // want "" means not found
	}{
		{"APlainFileIsReadWhenNoObjectHoldsItsKey", "tenants/local/docs/Guide One.md", "# Guide\n\nHello."},
		{"AnObjectShadowsAPlainFile", "tenants/local/docs/shadowed.md", "the object"},
		{"AFolderIsNotAFile", "tenants/local/dir", ""},
		{"AFileWhereAFolderShouldBeIsNotFound", "tenants/local/file/x.md", ""},
		{"KeysWithATildeReadNoPlainFile", "tenants/local/tilde~", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			info, err := b.Head(ctx, tc.key)
			rc, _, gerr := b.Get(ctx, tc.key, &store.GetOptions{Offset: 2})
			if tc.want == "" {
				if !errors.Is(err, store.ErrNotFound) || !errors.Is(gerr, store.ErrNotFound) {
					t.Errorf("Head = %v, Get = %v; want not found", err, gerr)
				}
				return
			}
			if err != nil || gerr != nil {
				t.Fatalf("Head = %v, Get = %v", err, gerr)
			}
			got, _ := io.ReadAll(rc)
			rc.Close()
			if string(got) != tc.want[2:] || info.Size != int64(len(tc.want)) || info.ETag != fmt.Sprintf("%x", md5.Sum([]byte(tc.want))) {
				t.Errorf("read %q, info %+v; want %q from offset 2, its size and MD5", got, info, tc.want)
			}
		})
	}
	os.Remove(filepath.Join(dir, "tenants", "local", "tilde~")) // it looks like an object file, a corrupt one
	if diff := cmp.Diff([]string{"tenants/local/docs/shadowed.md"}, listKeys(t, b, "")); diff != "" {
		t.Errorf("plain files were listed (-want +got):\n%s", diff)
	}
	if got, want := b.Where("tenants/local/docs/a.md"), filepath.Join(dir, "tenants", "local", "docs", "a.md"); got != want {
		t.Errorf("Where = %s, want %s", got, want)
	}
}

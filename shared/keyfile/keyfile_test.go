package keyfile_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/keyfile"
)

var secret = strings.Repeat("s", keyfile.MinSecretBytes)

func TestLoadCreatesAPrivateFileOnFirstUseAndKeepsIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.json")
	first, err := keyfile.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm != 0o600 {
		t.Errorf("key file mode %v, want 0600", perm)
	}
	if ids := first.IDs(); len(ids) != 1 || ids[0] != "k1" {
		t.Errorf("a new key file holds %v, want [k1]", ids)
	}
	again, err := keyfile.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first, again); diff != "" {
		t.Errorf("the keys changed across loads (-first +again):\n%s", diff)
	}
}

func TestLoadRefusesAFileOthersCanRead(t *testing.T) {
	for _, mode := range []os.FileMode{0o640, 0o604} {
		path := filepath.Join(t.TempDir(), "keys.json")
		if err := os.WriteFile(path, []byte(`{"k1":"`+secret+`"}`), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		_, err := keyfile.Load(path)
		if err == nil || !strings.Contains(err.Error(), "chmod 600") {
			t.Errorf("Load of a key file of mode %v: %v, want a refusal saying chmod 600", mode, err)
		}
	}
}

func TestParseRefusesBadKeysWithoutQuotingTheSecret(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"malformed JSON", `not json "hunter2-hunter2"`, "not a JSON object"},
		{"no key", `{}`, "at least one key"},
		{"an id that is not k and a number", `{"key1":"hunter2-` + secret + `"}`, `key id "key1"`},
		{"an id with a leading zero", `{"k01":"hunter2-` + secret + `"}`, `key id "k01"`},
		{"a short secret", `{"k1":"hunter2-hunter2"}`, "key k1 has 15 bytes of secret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := keyfile.Parse(tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse(%s) = %v, want an error saying %q", tc.in, err, tc.want)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("the error quotes the secret: %v", err)
			}
		})
	}
}

func TestIDsOrdersKeysByNumberNotText(t *testing.T) {
	keys := keyfile.Keys{"k10": secret, "k2": secret, "k9": secret}
	if diff := cmp.Diff([]string{"k2", "k9", "k10"}, keys.IDs()); diff != "" {
		t.Errorf("IDs mismatch (-want +got):\n%s", diff)
	}
	if got := keys.Newest(); got != "k10" {
		t.Errorf("Newest = %s, want k10", got)
	}
}

func TestDeriveGivesEachPurposeAndKeyItsOwnKey(t *testing.T) {
	a := keyfile.Derive(secret, "purpose a", "k1")
	if len(a) != 32 {
		t.Fatalf("derived %d bytes, want 32", len(a))
	}
	for name, other := range map[string][]byte{
		"another purpose": keyfile.Derive(secret, "purpose b", "k1"),
		"another key id":  keyfile.Derive(secret, "purpose a", "k2"),
		"another secret":  keyfile.Derive(secret+"x", "purpose a", "k1"),
	} {
		if string(other) == string(a) {
			t.Errorf("%s derives the same key", name)
		}
	}
}

package elicit_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/elicit"
)

func TestLoadKeyFileCreatesAPrivateFileOnFirstUseAndKeepsIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "request-state-keys.json")
	first, err := elicit.LoadKeyFile(path)
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
	token, err := first.Seal(deleteCall(`{}`), elicit.State{Expires: time.Now().Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	again, err := elicit.LoadKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := again.Open(token, deleteCall(`{}`), time.Now()); err != nil {
		t.Errorf("a state sealed before the restart: %v", err)
	}
}

func TestLoadKeyFileRefusesAFileOthersCanRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.json")
	if err := os.WriteFile(path, []byte(`{"k1":"`+secret+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := elicit.LoadKeyFile(path); err == nil {
		t.Error("LoadKeyFile accepted a world-readable key file")
	}
}

func TestParseKeyringNeverQuotesTheSecret(t *testing.T) {
	_, err := elicit.ParseKeyring(`{"k1":"too-short-but-secret"}`)
	if err == nil {
		t.Fatal("ParseKeyring accepted a short secret")
	}
	if got := err.Error(); strings.Contains(got, "too-short-but-secret") {
		t.Errorf("error quotes the secret: %s", got)
	}
	_, err = elicit.ParseKeyring(`not json "hunter2"`)
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("ParseKeyring of malformed input: %v", err)
	}
}

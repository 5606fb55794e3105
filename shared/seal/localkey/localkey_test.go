package localkey_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/keyfile"
	"github.com/switchboard-dev/switchboard/shared/seal"
	"github.com/switchboard-dev/switchboard/shared/seal/localkey"
	"github.com/switchboard-dev/switchboard/shared/seal/sealtest"
)

func TestSealer(t *testing.T) {
	sealtest.Run(t, func(t *testing.T) seal.Sealer {
		s, err := localkey.LoadKeyFile(filepath.Join(t.TempDir(), "seal-keys.json"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

var ec = map[string]string{"tenant": "t1", "connector": "github"}

func TestRotationSealsWithTheNewestKeyAndOpensWithAll(t *testing.T) {
	k1, k2 := keyfile.NewSecret(), keyfile.NewSecret()
	old, err := localkey.New(keyfile.Keys{"k1": k1})
	if err != nil {
		t.Fatal(err)
	}
	rotated, err := localkey.New(keyfile.Keys{"k1": k1, "k2": k2})
	if err != nil {
		t.Fatal(err)
	}
	retired, err := localkey.New(keyfile.Keys{"k2": k2})
	if err != nil {
		t.Fatal(err)
	}
	sealedOld, err := old.Seal(t.Context(), []byte("token"), ec)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := rotated.Open(t.Context(), sealedOld, ec); err != nil || string(got) != "token" {
		t.Errorf("a secret sealed before the rotation: %q, %v", got, err)
	}
	sealedNew, err := rotated.Seal(t.Context(), []byte("token"), ec)
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := seal.Parse(sealedNew); !strings.HasPrefix(p.KeyID, "k2:") {
		t.Errorf("sealed with key %s after the rotation, want k2", p.KeyID)
	}
	if _, err := retired.Open(t.Context(), sealedOld, ec); err == nil || !strings.Contains(err.Error(), "local key k1") {
		t.Errorf("a secret of a retired key: %v, want a refusal naming local key k1", err)
	}
	if got, err := retired.Open(t.Context(), sealedNew, ec); err != nil || string(got) != "token" {
		t.Errorf("a secret of the newest key after retiring the old: %q, %v", got, err)
	}
}

func TestLoadKeyFileRefusesBadKeys(t *testing.T) {
	if _, err := localkey.New(keyfile.Keys{"k1": "short-secret"}); err == nil || !strings.HasPrefix(err.Error(), "localkey: key k1") {
		t.Errorf("a short key: %v, want a refusal naming key k1", err)
	}
}

package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/apikey"
	"github.com/switchboard-dev/switchboard/shared/config"
)

func TestCreateListAndRevokeAKey(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	if err := run(ctx, []string{"create", "--data", dir, "--tenant", "acme", "--principal", "ci"}, &out, &errOut); err != nil {
		t.Fatalf("create: %v\n%s", err, errOut.String())
	}
	secret := strings.TrimSpace(out.String())
	cfg := config.Local(dir)
	tbl, closeFn, err := cfg.OpenTable(ctx, &errOut)
	if err != nil {
		t.Fatal(err)
	}
	c, err := apikey.New(tbl, nil).Verify(ctx, secret)
	closeFn()
	if err != nil || c.Tenant != "acme" || c.Principal != "ci" {
		t.Fatalf("the printed key verifies as %+v, %v", c, err)
	}
	out.Reset()
	if err := run(ctx, []string{"list", "--data", dir}, &out, &errOut); err != nil || !strings.Contains(out.String(), apikey.Hash(secret)) {
		t.Fatalf("list = %q, %v", out.String(), err)
	}
	if strings.Contains(out.String(), secret) {
		t.Error("list shows the key itself")
	}
	if err := run(ctx, []string{"revoke", "--data", dir, apikey.Hash(secret)}, &out, &errOut); err != nil {
		t.Fatalf("revoke: %v", err)
	}
	for _, bad := range [][]string{{}, {"fly"}, {"revoke", "--data", dir}, {"create", "--data", dir, "--tenant", "Bad Tenant", "--principal", "x"}} {
		if err := run(ctx, bad, &out, &errOut); err == nil {
			t.Errorf("run(%q) succeeded", bad)
		}
	}
}

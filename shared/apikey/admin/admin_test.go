package admin_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/apikey"
	"github.com/switchboard-dev/switchboard/shared/apikey/admin"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/profile"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
)

// serve serves keys on the socket of a new data folder until the test ends,
// and returns the folder and how many keys the socket created.
func serve(t *testing.T, keys admin.Manager) (string, *atomic.Int32) {
	t.Helper()
	dir := t.TempDir()
	ln, err := admin.Listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var created atomic.Int32
	done := make(chan error, 1)
	go func() {
		done <- admin.Serve(ctx, ln, keys, &admin.Options{Created: func(apikey.Key) { created.Add(1) }})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return dir, &created
}

func TestTheSocketCreatesListsAndRevokesKeys(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		t.Cleanup(func() { storetest.PurgePartition(t, tbl, apikey.Partition) })
		ctx := context.Background()
		keys := apikey.New(tbl, nil)
		dir, created := serve(t, keys)
		c, err := admin.Dial(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		expires := time.Now().Add(time.Hour).Truncate(time.Second).UTC()
		secret, key, err := c.Create(ctx, "acme", "Zoë (ci)", []string{"memory"}, expires)
		if err != nil {
			t.Fatal(err)
		}
		got, err := keys.Verify(ctx, secret)
		if err != nil || got.Hash != key.Hash || got.Principal != "Zoë (ci)" || !got.ExpiresAt.Equal(expires) || !key.ExpiresAt.Equal(expires) {
			t.Fatalf("the key created through the socket verifies as %+v, %v; the socket said %+v", got, err, key)
		}
		if created.Load() != 1 {
			t.Errorf("Created was called %d times, want 1", created.Load())
		}
		list, err := c.List(ctx)
		if err != nil || len(list) != 1 || list[0].Hash != key.Hash || list[0].Tenant != "acme" || len(list[0].Scopes) != 1 {
			t.Fatalf("List = %+v, %v", list, err)
		}

		tests := []struct {
			name     string
			call     func() error
			wantKind fault.Kind
			wantText string
		}{
			{"a principal with an escape sequence is refused", func() error {
				_, _, err := c.Create(ctx, "acme", "eve\x1b[2J", nil, time.Time{})
				return err
			}, fault.KindInvalid, "principal"},
			{"an expiry in the past is refused", func() error {
				_, _, err := c.Create(ctx, "acme", "eve", nil, time.Now().Add(-5*time.Minute))
				return err
			}, fault.KindInvalid, "not in the future"},
			{"a malformed hash is refused", func() error { return c.Revoke(ctx, "../../keys") }, fault.KindInvalid, "hash"},
			{"an unknown hash is not found", func() error { return c.Revoke(ctx, strings.Repeat("0", 64)) }, fault.KindNotFound, "no key has the hash"},
			{"a profile with an unknown group is refused", func() error {
				_, err := c.SetProfile(ctx, key.Hash, profile.Profile{Groups: []string{"NL2SQL"}})
				return err
			}, fault.KindInvalid, "profile.groups"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				err := tt.call()
				if fault.KindOf(err) != tt.wantKind || !strings.Contains(err.Error(), tt.wantText) {
					t.Errorf("error = %v (%s), want %s containing %q", err, fault.KindOf(err), tt.wantKind, tt.wantText)
				}
			})
		}
		if created.Load() != 1 {
			t.Errorf("after refused creations Created was called %d times, want 1", created.Load())
		}

		p := profile.Profile{Groups: []string{catalog.GroupConnectors}, Deny: []string{"memory_delete"}}
		if set, err := c.SetProfile(ctx, key.Hash, p); err != nil || set.Hash != key.Hash || !set.Profile.EnablesGroup(catalog.GroupConnectors) {
			t.Fatalf("SetProfile through the socket = %+v, %v", set, err)
		}
		if got, err := keys.Verify(ctx, secret); err != nil || got.Profile.Allows("memory_delete", "") || got.Profile.EnablesGroup(catalog.GroupWebSearch) {
			t.Errorf("the profile set through the socket verifies as %+v, %v", got.Profile, err)
		}

		if err := c.Revoke(ctx, key.Hash); err != nil {
			t.Fatal(err)
		}
		if _, err := keys.Verify(ctx, secret); !errors.Is(err, apikey.ErrInvalidKey) {
			t.Errorf("Verify after revoking through the socket: %v, want ErrInvalidKey", err)
		}
	})
}

func TestTheSocketRefusesMalformedRequests(t *testing.T) {
	dir, created := serve(t, apikey.New(storetest.OpenEmbedded(t), nil))
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", admin.SocketPath(dir))
	}}}
	tests := []struct {
		name       string
		method     string
		body       string
		wantStatus int
	}{
		{"a body that is not JSON", http.MethodPost, `tenant=acme`, http.StatusBadRequest},
		{"an unknown field", http.MethodPost, `{"tenant":"acme","principal":"a","admin":true}`, http.StatusBadRequest},
		{"a body over the limit", http.MethodPost, `{"tenant":"acme","principal":"` + strings.Repeat("a", 100<<10) + `"}`, http.StatusBadRequest},
		{"another method", http.MethodPut, `{}`, http.StatusMethodNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, "http://switchboard/keys", strings.NewReader(tt.body))
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.wantStatus)
			}
		})
	}
	if created.Load() != 0 {
		t.Errorf("malformed requests created %d keys", created.Load())
	}
}

func TestListenRestrictsTheSocketToItsOwner(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, dir string)
		wantErr string
	}{
		{"a new folder", func(*testing.T, string) {}, ""},
		{"a folder others may enter is narrowed", func(t *testing.T, dir string) {
			mustDo(t, os.Mkdir(filepath.Join(dir, "admin"), 0o777))
			mustDo(t, os.Chmod(filepath.Join(dir, "admin"), 0o777))
		}, ""},
		{"a socket a killed server left is replaced", func(t *testing.T, dir string) {
			mustDo(t, os.Mkdir(filepath.Join(dir, "admin"), 0o700))
			ln, err := net.Listen("unix", admin.SocketPath(dir))
			mustDo(t, err)
			ln.(*net.UnixListener).SetUnlinkOnClose(false)
			ln.Close()
		}, ""},
		{"a symbolic link is refused", func(t *testing.T, dir string) {
			mustDo(t, os.Symlink(t.TempDir(), filepath.Join(dir, "admin")))
		}, "is not a folder"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tt.prepare(t, dir)
			ln, err := admin.Listen(dir)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("Listen = %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			for path, want := range map[string]os.FileMode{filepath.Join(dir, "admin"): 0o700, admin.SocketPath(dir): 0o600} {
				fi, err := os.Lstat(path)
				if err != nil || fi.Mode().Perm() != want {
					t.Errorf("%s: mode %v, %v; want %v", path, fi.Mode().Perm(), err, want)
				}
			}
			if fi, _ := os.Lstat(admin.SocketPath(dir)); fi.Mode().Type() != os.ModeSocket {
				t.Errorf("%s is not a socket", admin.SocketPath(dir))
			}
		})
	}
}

func TestDialSaysWhenNoServerIsRunning(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		prepare func(t *testing.T, dir string)
	}{
		{"no socket", func(*testing.T, string) {}},
		{"a socket a killed server left", func(t *testing.T, dir string) {
			ln, err := admin.Listen(dir)
			mustDo(t, err)
			ln.(*net.UnixListener).SetUnlinkOnClose(false)
			ln.Close()
		}},
		{"a server that stopped", func(t *testing.T, dir string) {
			ln, err := admin.Listen(dir)
			mustDo(t, err)
			stop, cancel := context.WithCancel(ctx)
			cancel()
			mustDo(t, admin.Serve(stop, ln, apikey.New(storetest.OpenEmbedded(t), nil), nil))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tt.prepare(t, dir)
			if _, err := admin.Dial(ctx, dir); !errors.Is(err, admin.ErrNotRunning) {
				t.Errorf("Dial = %v, want ErrNotRunning", err)
			}
		})
	}
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

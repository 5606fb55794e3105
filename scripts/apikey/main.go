// Command apikey creates, lists and revokes Switchboard API keys, in the
// local data folder or in the deployed DynamoDB table:
//
//	go run ./scripts/apikey create --tenant acme --principal alice [--expires 720h]
//	go run ./scripts/apikey list
//	go run ./scripts/apikey revoke HASH
//	go run ./scripts/apikey profile [--groups "Vector Search,Connectors"] [--allow 'memory_*,rag_basic'] [--deny memory_delete] HASH
//
// profile replaces a key's tool profile (package profile): the tool groups
// it enables (without --groups, every group; --groups "" none), the only
// tool names it allows (* stands for any run of characters) and those it
// denies; with no flag the key may call every tool again.
// Each takes --data DIR (the local server's folder, default .switchboard) or
// --table NAME (a DynamoDB table, with AWS credentials and region from the
// environment, as the AWS CLI takes them). While a local server runs on the
// folder, which it holds locked, the command works through the server's
// socket in it (package apikey/admin). A key is printed once, at creation;
// only its SHA-256 is stored.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/switchboard-dev/switchboard/shared/apikey"
	"github.com/switchboard-dev/switchboard/shared/apikey/admin"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/profile"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "apikey:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: apikey create|list|revoke|profile [flags]; apikey create -h for the flags")
	}
	cmd, args := args[0], args[1:]
	if cmd != "create" && cmd != "list" && cmd != "revoke" && cmd != "profile" {
		return fmt.Errorf("unknown command %q: use create, list, revoke or profile", cmd)
	}
	fs := flag.NewFlagSet("apikey "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("data", ".switchboard", "the local server's data `folder`")
	table := fs.String("table", "", "a DynamoDB table `name` (instead of --data)")
	t := fs.String("tenant", "", "the `tenant` the key acts for (create)")
	principal := fs.String("principal", "", "`who` holds the key, for the audit log (create)")
	expires := fs.Duration("expires", 0, "how long the key lives, e.g. 720h; without it, until revoked (create)")
	groups := fs.String("groups", "", "the tool `groups` the key enables, comma-separated, of "+strings.Join(catalog.Groups(), ", ")+"; without it, all (profile)")
	allow := fs.String("allow", "", "the only tool `names` the key may call, comma-separated; * stands for any run of characters (profile)")
	deny := fs.String("deny", "", "tool `names` the key may not call, comma-separated, * as in --allow (profile)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var until time.Time
	if set(fs, "expires") {
		if *expires <= 0 {
			return fmt.Errorf("--expires %s: give a positive duration, such as 720h, or leave --expires out for a key that lives until revoked", *expires)
		}
		until = time.Now().Add(*expires)
	}
	if (cmd == "revoke" || cmd == "profile") && fs.NArg() != 1 {
		return fmt.Errorf("usage: apikey %s [--data DIR | --table NAME] HASH (apikey list shows the hashes)", cmd)
	}
	var p profile.Profile
	if cmd == "profile" {
		var err error
		if p, err = profile.Parse(*groups, set(fs, "groups"), *allow, *deny); err != nil {
			return err
		}
	}
	keys, closeFn, err := open(ctx, *data, *table, stderr)
	if err != nil {
		return err
	}
	defer closeFn()
	deployed := *table != ""
	switch cmd {
	case "create":
		return create(ctx, keys, deployed, *data, *t, *principal, until, stdout, stderr)
	case "list":
		return list(ctx, keys, stdout)
	case "profile":
		key, err := keys.SetProfile(ctx, strings.TrimSpace(fs.Arg(0)), p)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s\t%s\n", key.Hash, describe(key.Profile))
		if deployed {
			fmt.Fprintln(stderr, "Set. A warm gateway may apply the key's old profile for up to a minute more (it caches verified keys).")
		}
		return nil
	default:
		if err := keys.Revoke(ctx, strings.TrimSpace(fs.Arg(0))); err != nil {
			return err
		}
		if deployed {
			fmt.Fprintln(stderr, "Revoked. A warm gateway may accept the key for up to a minute more (it caches verified keys).")
		} else {
			fmt.Fprintln(stderr, "Revoked. The local server refuses the key from now on.")
		}
		return nil
	}
}

// set reports whether the flag name was given.
func set(fs *flag.FlagSet, name string) bool {
	found := false
	fs.Visit(func(f *flag.Flag) { found = found || f.Name == name })
	return found
}

// open returns the keys of the DynamoDB table, if named, or else of the data
// folder: through the socket of the server running on it, or directly.
func open(ctx context.Context, data, table string, stderr io.Writer) (admin.Manager, func() error, error) {
	cfg := config.Local(data)
	if table != "" {
		cfg = config.Config{Table: table}
	} else {
		c, err := admin.Dial(ctx, data)
		if err == nil {
			return c, func() error { return nil }, nil
		}
		if !errors.Is(err, admin.ErrNotRunning) {
			return nil, nil, err
		}
	}
	tbl, closeFn, err := cfg.OpenTable(ctx, stderr)
	if err != nil {
		return nil, nil, err
	}
	return apikey.New(tbl, nil), closeFn, nil
}

func create(ctx context.Context, keys admin.Manager, deployed bool, data, t, principal string, until time.Time, stdout, stderr io.Writer) error {
	existing, err := keys.List(ctx)
	if err != nil {
		return err
	}
	secret, key, err := keys.Create(ctx, t, principal, nil, until)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s\n", secret)
	fmt.Fprintf(stderr, "Created a key for tenant %q, principal %q (hash %s). It is shown only now; the server keeps only its hash.\n", key.Tenant, key.Principal, key.Hash)
	fmt.Fprintf(stderr, "Use it as: Authorization: Bearer <key>\n")
	if deployed || len(existing) > 0 {
		return nil
	}
	fmt.Fprintf(stderr, "\nNote: this is the first key of %s, so HTTP requests without a key, which acted for tenant %q, are refused from now on (over --stdio every request still acts for %q).\n", data, tenant.Local, tenant.Local)
	if key.Tenant != tenant.Local {
		fmt.Fprintf(stderr, "This key acts for tenant %q and sees nothing created without a key, which belongs to tenant %q. To keep working on that, use a key for it:\n  go run ./scripts/apikey create --data %s --tenant %s --principal %s\n", key.Tenant, tenant.Local, shellQuote(data), tenant.Local, shellQuote(key.Principal))
	}
	return nil
}

func list(ctx context.Context, keys admin.Manager, stdout io.Writer) error {
	all, err := keys.List(ctx)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(stdout, 2, 8, 2, ' ', 0)
	fmt.Fprintln(w, "HASH\tTENANT\tPRINCIPAL\tCREATED\tEXPIRES\tPROFILE")
	for _, k := range all {
		exp := "never"
		if !k.ExpiresAt.IsZero() {
			exp = k.ExpiresAt.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", printable(k.Hash), printable(k.Tenant), printable(k.Principal), k.Created.Format(time.RFC3339), exp, describe(k.Profile))
	}
	return w.Flush()
}

// describe returns a profile as the profile command's flags would give it,
// or "all tools".
func describe(p profile.Profile) string {
	if p.IsZero() {
		return "all tools"
	}
	var parts []string
	if p.Groups != nil {
		parts = append(parts, "groups="+strconv.Quote(strings.Join(p.Groups, ",")))
	}
	if len(p.Allow) > 0 {
		parts = append(parts, "allow="+strings.Join(p.Allow, ","))
	}
	if len(p.Deny) > 0 {
		parts = append(parts, "deny="+strings.Join(p.Deny, ","))
	}
	return strings.Join(parts, " ")
}

// printable returns s as it is if every character in it prints as itself,
// and quoted with Go's escapes otherwise: a table written before tenants and
// principals were checked may hold terminal escape sequences, tabs that would
// break the columns, or bidirectional overrides.
func printable(s string) string {
	if q := strconv.Quote(s); s == "" || q[1:len(q)-1] != s || strings.TrimSpace(s) != s {
		return q
	}
	return s
}

// shellQuote returns s as one word for a POSIX shell.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

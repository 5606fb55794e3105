// Command apikey creates, lists and revokes Switchboard API keys, in the
// local data folder or in the deployed DynamoDB table:
//
//	go run ./scripts/apikey create --tenant acme --principal alice [--expires 720h]
//	go run ./scripts/apikey list
//	go run ./scripts/apikey revoke HASH
//
// Each takes --data DIR (the local server's folder, default .switchboard) or
// --table NAME (a DynamoDB table, with AWS credentials and region from the
// environment, as the AWS CLI takes them). A key is printed once, at
// creation; only its SHA-256 is stored.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/switchboard-dev/switchboard/shared/apikey"
	"github.com/switchboard-dev/switchboard/shared/config"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "apikey:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: apikey create|list|revoke [flags]; apikey create -h for the flags")
	}
	cmd, args := args[0], args[1:]
	fs := flag.NewFlagSet("apikey "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("data", ".switchboard", "the local server's data `folder`")
	table := fs.String("table", "", "a DynamoDB table `name` (instead of --data)")
	t := fs.String("tenant", "", "the `tenant` the key acts for (create)")
	principal := fs.String("principal", "", "`who` holds the key, for the audit log (create)")
	expires := fs.Duration("expires", 0, "how long the key lives, e.g. 720h; 0 means until revoked (create)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg := config.Local(*data)
	if *table != "" {
		cfg = config.Config{Table: *table}
	}
	tbl, closeFn, err := cfg.OpenTable(ctx, stderr)
	if err != nil {
		return err
	}
	defer closeFn()
	keys := apikey.New(tbl, nil)
	switch cmd {
	case "create":
		var until time.Time
		if *expires > 0 {
			until = time.Now().Add(*expires)
		}
		secret, key, err := keys.Create(ctx, *t, *principal, nil, until)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s\n", secret)
		fmt.Fprintf(stderr, "Created a key for tenant %q, principal %q (hash %s). It is shown only now; the server keeps only its hash.\n", key.Tenant, key.Principal, key.Hash)
		fmt.Fprintf(stderr, "Use it as: Authorization: Bearer <key>\n")
		return nil
	case "list":
		list, err := keys.List(ctx)
		if err != nil {
			return err
		}
		w := tabwriter.NewWriter(stdout, 2, 8, 2, ' ', 0)
		fmt.Fprintln(w, "HASH\tTENANT\tPRINCIPAL\tCREATED\tEXPIRES")
		for _, k := range list {
			exp := "never"
			if !k.ExpiresAt.IsZero() {
				exp = k.ExpiresAt.UTC().Format(time.RFC3339)
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", k.Hash, k.Tenant, k.Principal, k.Created.Format(time.RFC3339), exp)
		}
		return w.Flush()
	case "revoke":
		if fs.NArg() != 1 {
			return fmt.Errorf("usage: apikey revoke [--data DIR | --table NAME] HASH (apikey list shows the hashes)")
		}
		if err := keys.Revoke(ctx, strings.TrimSpace(fs.Arg(0))); err != nil {
			return err
		}
		fmt.Fprintln(stderr, "Revoked. A running gateway may accept the key for up to a minute more (it caches verified keys).")
		return nil
	}
	return fmt.Errorf("unknown command %q: use create, list or revoke", cmd)
}

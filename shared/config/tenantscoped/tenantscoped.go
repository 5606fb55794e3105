// Package tenantscoped opens the credentials a tool function reaches the
// table and the bucket with when a tenant role is configured
// (SWITCHBOARD_TENANT_ROLE_ARN): a [tenantcreds.Provider] that assumes the
// role for each call's tenant, with a session policy limited to that
// tenant's items and objects and to what the function's catalog entry
// grants. It is a package of its own so that only the functions that
// assume the role link package tenantcreds; the gateway keeps its own role.
//
//	p, err := tenantscoped.Open(ctx, &cfg, fn) // nil if no tenant role is configured
//	if p != nil { cfg.ScopeStorage(p) }        // then OpenTable and blobs.Open sign as the tenant
package tenantscoped

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/tenantcreds"
)

// Open returns the tenant-scoped credentials of function f, or nil if c
// names no tenant role.
func Open(ctx context.Context, c *config.Config, f catalog.Function) (aws.CredentialsProvider, error) {
	if c.TenantRoleARN == "" {
		return nil, nil
	}
	cfg, err := c.AWS(ctx)
	if err != nil {
		return nil, err
	}
	res := tenantcreds.Resources{TableARN: c.TableARN}
	if f.Blobs != catalog.NoAccess {
		res.BucketARN, res.KeyARN = c.BucketARN, c.BucketKeyARN
	}
	p, err := tenantcreds.New(cfg, tenantcreds.Options{RoleARN: c.TenantRoleARN, Resources: res,
		Grant: tenantcreds.Grant{Items: Items(f), Objects: Access(f.Blobs), Shared: Shared(f)}})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", config.EnvTenantRoleARN, err)
	}
	return p, nil
}

// Items is the session policy's access to the table of function f: its
// catalog access, with deletes only if its catalog entry says it deletes, as
// the template grants its own role.
func Items(f catalog.Function) tenantcreds.Access {
	if a := Access(f.Table); a != tenantcreds.ReadWriteDelete || f.Deletes {
		return a
	}
	return tenantcreds.ReadWrite
}

// Shared are the partitions outside every tenant's keys that function f
// writes along with its tenant's items: the connectors' sync index for a
// function that connects.
func Shared(f catalog.Function) []string {
	if f.Connects && Items(f) >= tenantcreds.ReadPut {
		return []string{catalog.ConnectorSyncIndex}
	}
	return nil
}

// Access maps a catalog access level to a session policy's. Read-write
// includes deletes: objects are deleted by every function that writes them
// (the template grants s3:DeleteObject so); [Items] narrows the table's.
func Access(a catalog.Access) tenantcreds.Access {
	switch a {
	case catalog.Read:
		return tenantcreds.Read
	case catalog.ReadPut:
		return tenantcreds.ReadPut
	case catalog.ReadWrite:
		return tenantcreds.ReadWriteDelete
	}
	return tenantcreds.NoAccess
}

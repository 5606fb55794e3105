// Package tenantcreds gives a function AWS credentials that reach one
// tenant's items and objects and nothing else: STS AssumeRole with a session
// policy generated for the tenant (AWS's "dynamically generated policies" for
// SaaS), so tenant isolation rests on IAM as well as on the code's key
// prefixes.
//
// A tenant's session policy allows the DynamoDB item actions a function
// needs on the table, only where every partition key begins
// t#<tenant># (dynamodb:LeadingKeys), and the S3 object actions it needs
// under tenants/<tenant>/ in the bucket (listing only with that prefix). The
// role the functions assume ([RolePolicy]) allows the same for whichever
// tenant its session is tagged with, within a boundary ([Boundary]) that no
// tenant's session policy exceeds, and trusts only the functions' execution
// roles ([TrustPolicy]).
//
// At run time a [Provider] is the aws.CredentialsProvider of a function's
// DynamoDB and S3 clients: it reads the tenant from the call's context
// ([NewContext]) and answers that tenant's credentials, cached per tenant.
// It calls STS's AssumeRole itself (sts.go) rather than through the SDK's
// STS client, which would cost every tool function's cold start.
//
//	p, err := tenantcreds.New(cfg, tenantcreds.Options{ // cfg: the function's own credentials
//		RoleARN:   os.Getenv("SWITCHBOARD_TENANT_ROLE_ARN"),
//		Resources: tenantcreds.Resources{TableARN: tableARN, BucketARN: bucketARN},
//		Grant:     tenantcreds.Grant{Items: tenantcreds.ReadWrite, Objects: tenantcreds.Read},
//	})
//	scoped := cfg.Copy()
//	scoped.Credentials = p
//	table := dynamo.New(scoped, tableName)
//	...
//	ctx = tenantcreds.NewContext(ctx, caller.Tenant) // per call, before the domain method
package tenantcreds

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// Access is a level of access to a tenant's items or objects.
type Access int

// The levels of [Access]. Each includes the ones before it.
const (
	// NoAccess grants nothing.
	NoAccess Access = iota
	// Read grants dynamodb:GetItem and Query on items; s3:GetObject on
	// objects, and s3:ListBucket with the tenant's prefix.
	Read
	// ReadPut adds dynamodb:PutItem; it is a level for items only (functions
	// that record but never change what they read).
	ReadPut
	// ReadWrite adds dynamodb:PutItem and ConditionCheckItem (a transaction
	// of puts and checks); s3:PutObject on objects.
	ReadWrite
	// ReadWriteDelete adds dynamodb:DeleteItem; s3:DeleteObject on objects.
	ReadWriteDelete
)

// String returns the level's name, as errors print it.
func (a Access) String() string {
	switch a {
	case NoAccess:
		return "no access"
	case Read:
		return "read"
	case ReadPut:
		return "read-put"
	case ReadWrite:
		return "read-write"
	case ReadWriteDelete:
		return "read-write-delete"
	}
	return fmt.Sprintf("access level %d", int(a))
}

// itemActions returns the DynamoDB actions of level a. TransactWriteItems
// has no action of its own: each item of a transaction is authorised as a
// PutItem, DeleteItem or ConditionCheckItem.
func itemActions(a Access) []string {
	var out []string
	if a >= Read {
		out = append(out, "dynamodb:GetItem", "dynamodb:Query")
	}
	if a >= ReadPut {
		out = append(out, "dynamodb:PutItem")
	}
	if a >= ReadWrite {
		out = append(out, "dynamodb:ConditionCheckItem")
	}
	if a >= ReadWriteDelete {
		out = append(out, "dynamodb:DeleteItem")
	}
	return out
}

// objectActions returns the S3 object actions of level a.
func objectActions(a Access) []string {
	var out []string
	if a >= Read {
		out = append(out, "s3:GetObject")
	}
	if a >= ReadWrite {
		out = append(out, "s3:PutObject")
	}
	if a >= ReadWriteDelete {
		out = append(out, "s3:DeleteObject")
	}
	return out
}

// Grant is what one function may do with its caller's tenant's data.
type Grant struct {
	Items   Access
	Objects Access
	// Shared are partitions outside every tenant's keys whose items the
	// session may write blind, as part of its tenant's own writes: PutItem,
	// and DeleteItem with Items [ReadWriteDelete]; never a read, so that no
	// tenant learns what others keep there (the connectors' sync index,
	// whose sort keys name tenants). It needs Items of at least [ReadPut].
	Shared []string
}

// validate checks that g grants something and names only levels that
// exist; [ReadPut] is a level of item access only.
func (g Grant) validate() error {
	switch {
	case g.Items < NoAccess || g.Items > ReadWriteDelete:
		return fmt.Errorf("grant items: unknown %s", g.Items)
	case g.Objects < NoAccess || g.Objects > ReadWriteDelete:
		return fmt.Errorf("grant objects: unknown %s", g.Objects)
	case g.Objects == ReadPut:
		return fmt.Errorf("grant objects: %s is a level of item access only", ReadPut)
	case g.Items == NoAccess && g.Objects == NoAccess:
		return errors.New("grant: grants no access to items or objects")
	case len(g.Shared) > 0 && g.Items < ReadPut:
		return fmt.Errorf("grant shared: writing shared partitions needs items of %s or more, not %s", ReadPut, g.Items)
	}
	for _, pk := range g.Shared {
		if pk == "" || strings.HasPrefix(pk, tenant.Key("")[:2]) || strings.ContainsFunc(pk, func(r rune) bool {
			return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune("_#-.", r))
		}) {
			return fmt.Errorf("grant shared: %q is not a partition outside every tenant's keys (letters, digits and _ # - . only, not beginning t#)", pk)
		}
	}
	return nil
}

// Resources names the table and bucket a policy is about.
type Resources struct {
	// TableARN is the table's ARN: arn:aws:dynamodb:<region>:<account>:table/<name>.
	TableARN string
	// BucketARN is the bucket's ARN: arn:aws:s3:::<name>.
	BucketARN string
	// KeyARN, if set, is the customer-managed KMS key the bucket's objects
	// are encrypted with (SSE-KMS): arn:aws:kms:<region>:<account>:key/<id>.
	// A grant of objects then includes its use through S3: kms:Decrypt to
	// read, kms:GenerateDataKey to write. DynamoDB uses a table's key by a
	// grant of its own, so items need none.
	KeyARN string
}

// MaxSessionPolicyBytes is the most plain text STS accepts as a session
// policy (AssumeRole's Policy). STS also packs the policy and the session's
// tags into a binary form with its own limit, which only STS can measure.
const MaxSessionPolicyBytes = 2048

// TagKey is the session tag that carries the tenant, which [RolePolicy]
// reads as aws:PrincipalTag/tenant.
const TagKey = "tenant"

// TenantVariable is the IAM policy variable that stands for the tenant of
// the session in [RolePolicy]. Inside a CloudFormation Fn::Sub string it
// must be written ${!aws:PrincipalTag/tenant}.
const TenantVariable = "${aws:PrincipalTag/" + TagKey + "}"

// Policy is an IAM policy document. Its JSON encoding ([Policy.JSON]) is
// what IAM and STS accept.
type Policy struct {
	Version   string
	Statement []Statement
}

// Statement is one statement of a [Policy].
type Statement struct {
	Sid       string
	Effect    string
	Principal map[string][]string `json:",omitempty"`
	Action    []string
	Resource  []string `json:",omitempty"`
	// Condition maps an operator (StringLike, ...) to condition keys and
	// their values.
	Condition map[string]map[string][]string `json:",omitempty"`
}

// JSON returns p as compact JSON, the form STS counts against
// [MaxSessionPolicyBytes].
func (p Policy) JSON() string {
	b, err := json.Marshal(p)
	if err != nil {
		panic(err) // strings, slices and maps of strings always encode
	}
	return string(b)
}

const policyVersion = "2012-10-17"

// SessionPolicy returns the session policy for tenant id: g's item actions
// on the table where every leading key begins t#<id>#, and g's object
// actions on the bucket's objects under tenants/<id>/. The tenant id and
// the ARNs are checked first, so that no character IAM reads as a wildcard
// or a variable (*, ?, $, {) can reach the policy, and the policy is
// refused if its JSON passes [MaxSessionPolicyBytes].
func SessionPolicy(id string, r Resources, g Grant) (Policy, error) {
	if err := tenant.Validate(id); err != nil {
		return Policy{}, fmt.Errorf("session policy: %w", err)
	}
	if err := r.validate(g); err != nil {
		return Policy{}, fmt.Errorf("session policy for tenant %s: %w", id, err)
	}
	if err := g.validate(); err != nil {
		return Policy{}, fmt.Errorf("session policy for tenant %s: %w", id, err)
	}
	p := Policy{Version: policyVersion, Statement: statements(id, r, g)}
	if n := len(p.JSON()); n > MaxSessionPolicyBytes {
		return Policy{}, fmt.Errorf("session policy for tenant %s: %d bytes, more than STS accepts (%d)", id, n, MaxSessionPolicyBytes)
	}
	return p, nil
}

// RolePolicy returns the identity policy of the role the functions assume:
// every level of access, on the items and objects of the tenant the session
// is tagged with ([TenantVariable]), and blind writes to the shared
// partitions ([Grant.Shared]). A session without the tag reaches nothing
// of a tenant's. Resource strings are copied as given, so that the
// template's generator may pass its own expressions for the ARNs.
func RolePolicy(r Resources, shared ...string) Policy {
	return Policy{Version: policyVersion, Statement: statements(TenantVariable, r, Grant{Items: ReadWriteDelete, Objects: ReadWriteDelete, Shared: shared})}
}

// Boundary returns the permissions boundary of the role the functions
// assume: the union of every tenant's session policies, that is every level
// of access on items whose leading keys begin t#<some tenant># and on
// objects under tenants/<some tenant>/. It leaves out the rest of the table
// (the _apikeys partition) and of the bucket, but for blind writes to the
// shared partitions ([Grant.Shared]). Resource strings are copied as given,
// as in [RolePolicy].
func Boundary(r Resources, shared ...string) Policy {
	return Policy{Version: policyVersion, Statement: statements("*", r, Grant{Items: ReadWriteDelete, Objects: ReadWriteDelete, Shared: shared})}
}

// TrustPolicy returns the trust policy of the role the functions assume:
// principals of account (its root ARN, arn:aws:iam::<account>:root) whose
// ARN matches one of callers (the functions' execution roles; ArnLike, so
// a caller may end in a wildcard) may assume it, and may tag the session
// with [TagKey] and no other tag. Trusting the account with a condition on
// the caller's ARN, rather than naming the callers as principals, lets the
// template create the role before the functions' roles, which name it in
// their own policies. Strings are copied as given.
func TrustPolicy(account string, callers []string) Policy {
	principal := map[string][]string{"AWS": {account}}
	callerIs := map[string][]string{"aws:PrincipalArn": callers}
	return Policy{Version: policyVersion, Statement: []Statement{
		{
			Sid: "FunctionsAssume", Effect: "Allow", Principal: principal,
			Action:    []string{"sts:AssumeRole"},
			Condition: map[string]map[string][]string{"ArnLike": callerIs},
		},
		{
			Sid: "FunctionsTagTenant", Effect: "Allow", Principal: principal,
			Action: []string{"sts:TagSession"},
			Condition: map[string]map[string][]string{
				"ArnLike":                   callerIs,
				"StringLike":                {"aws:RequestTag/" + TagKey: {"?*"}},
				"ForAllValues:StringEquals": {"aws:TagKeys": {TagKey}},
			},
		},
	}}
}

// statements returns the statements granting g on the items and objects of
// the tenants that scope matches: a tenant id, a policy variable or "*".
func statements(scope string, r Resources, g Grant) []Statement {
	var out []Statement
	if actions := itemActions(g.Items); len(actions) > 0 {
		out = append(out, Statement{
			Sid: "TenantItems", Effect: "Allow", Action: actions, Resource: []string{r.TableARN},
			Condition: map[string]map[string][]string{
				"ForAllValues:StringLike": {"dynamodb:LeadingKeys": {tenant.Key(scope) + "*"}},
				// ForAllValues holds when a request has no leading keys at
				// all; no action granted here lacks them, and this keeps it
				// so if one ever is.
				"Null": {"dynamodb:LeadingKeys": {"false"}},
			},
		})
	}
	if len(g.Shared) > 0 {
		actions := []string{"dynamodb:PutItem"}
		if g.Items >= ReadWriteDelete {
			actions = append(actions, "dynamodb:DeleteItem")
		}
		// No Null guard, unlike TenantItems: PutItem and DeleteItem always
		// name a key, and the bytes count against STS's limit.
		out = append(out, Statement{
			Sid: "SharedWrites", Effect: "Allow", Action: actions, Resource: []string{r.TableARN},
			Condition: map[string]map[string][]string{"ForAllValues:StringEquals": {"dynamodb:LeadingKeys": g.Shared}},
		})
	}
	if actions := objectActions(g.Objects); len(actions) > 0 {
		prefix := tenant.BlobPrefix(scope)
		out = append(out,
			Statement{Sid: "TenantObjects", Effect: "Allow", Action: actions, Resource: []string{r.BucketARN + "/" + prefix + "*"}},
			Statement{
				Sid: "TenantList", Effect: "Allow", Action: []string{"s3:ListBucket"}, Resource: []string{r.BucketARN},
				Condition: map[string]map[string][]string{"StringLike": {"s3:prefix": {prefix + "*"}}},
			},
		)
		if r.KeyARN != "" {
			out = append(out, Statement{Sid: "TenantObjectsKey", Effect: "Allow", Action: keyActions(g.Objects), Resource: []string{r.KeyARN},
				// Only S3 may use it on the session's behalf (a key is
				// regional, so only the bucket's region's S3 can): the
				// session cannot decrypt with the key directly.
				Condition: map[string]map[string][]string{"StringLike": {"kms:ViaService": {"s3.*.amazonaws.com"}}}})
		}
	}
	return out
}

// keyActions returns the KMS actions that S3 needs of a caller to read
// (kms:Decrypt) and to write (kms:GenerateDataKey) objects under SSE-KMS.
func keyActions(a Access) []string {
	out := []string{"kms:Decrypt"}
	if a >= ReadWrite {
		out = append(out, "kms:GenerateDataKey")
	}
	return out
}

// validate checks the ARNs that g needs: the table's when g grants items,
// the bucket's when it grants objects.
func (r Resources) validate(g Grant) error {
	if g.Items != NoAccess {
		if err := checkARN("table ARN", r.TableARN, "dynamodb", "table/", true, true); err != nil {
			return err
		}
	}
	if g.Objects != NoAccess {
		if err := checkARN("bucket ARN", r.BucketARN, "s3", "", false, false); err != nil {
			return err
		}
		if strings.Contains(r.BucketARN, "/") {
			return fmt.Errorf("bucket ARN %q must name a bucket, not objects", r.BucketARN)
		}
		if r.KeyARN != "" {
			if err := checkARN("key ARN", r.KeyARN, "kms", "key/", true, true); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkARN checks that arn is arn:<partition>:<service>:<region>:<account>:<resource>,
// with a region if region is set (DynamoDB; IAM and S3 have none), a
// 12-digit account if account is set (DynamoDB, IAM; S3 has none), a
// resource beginning with kind, and only the characters AWS allows in
// resource names: letters, digits and + = , . @ _ / -, never a wildcard or
// a policy variable.
func checkARN(field, arn, service, kind string, region, account bool) error {
	parts := strings.SplitN(arn, ":", 6)
	bad := func(why string) error {
		return fmt.Errorf("%s %q %s", field, arn, why)
	}
	if len(parts) != 6 || parts[0] != "arn" || parts[1] == "" || parts[2] != service {
		return bad(fmt.Sprintf("is not an ARN of %s (arn:<partition>:%s:...)", service, service))
	}
	switch {
	case region && parts[3] == "":
		return bad("must name a region")
	case !region && parts[3] != "":
		return bad("must name no region")
	case account && !isAccount(parts[4]):
		return bad("must name a 12-digit account")
	case !account && parts[4] != "":
		return bad("must name no account")
	case !strings.HasPrefix(parts[5], kind) || len(parts[5]) == len(kind):
		return bad(fmt.Sprintf("must name a resource %s<name>", kind))
	}
	for _, c := range []byte(arn) {
		if !isARNByte(c) {
			return bad(fmt.Sprintf("contains %q; ARNs here may hold only letters, digits and + = , . @ _ / - :", c))
		}
	}
	return nil
}

func isAccount(s string) bool {
	if len(s) != 12 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isARNByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("+=,.@_/-:", c) >= 0
}

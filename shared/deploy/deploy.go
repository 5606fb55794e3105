// Package deploy generates, from the catalog, everything that deploys
// Switchboard or documents what it deploys, so that none of it can drift from
// the catalog: template.yaml (the SAM template, rendered from
// infra/template.yaml.tmpl), the per-function build targets of the Makefile,
// the sample events under events/, and the README's tool table.
//
//	files, err := deploy.Generate(".", catalog.Default()) // path -> content, for go run ./scripts/generate
//	tmpl, err := deploy.Template(catalog.Default())       // template.yaml alone
//
// The tests of this package fail when a generated file differs from what
// Generate produces now, and check the template against the catalog: the
// functions, their limits, and IAM access that is exactly what each function's
// catalog entry says it needs.
package deploy

import (
	"bytes"
	"fmt"
	"strings"
	"text/template"
	"time"

	"github.com/switchboard-dev/switchboard/infra"
	"github.com/switchboard-dev/switchboard/shared/apikey"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/store"
)

// GatewayPath is the gateway's folder under functions/.
const GatewayPath = "gateway"

// GatewayLimits are the gateway function's limits. The timeout stays under
// the HTTP API's 30-second integration limit, so the function, not API
// Gateway, decides what a slow call returns. The memory is generous because
// Lambda allots CPU in proportion to it, and the gateway's cold start (building
// the MCP server from the catalog) is CPU-bound.
var GatewayLimits = catalog.Limits{Timeout: 29 * time.Second, MemoryMB: 1024}

// A Route is one HTTP API route to the gateway.
type Route struct {
	// ID names the route's event in the template.
	ID, Method, Path string
}

// Routes are the gateway's HTTP API routes: MCP, the memory server seed's
// compatibility endpoints, and the RFC 9728 protected-resource metadata.
// ANY /mcp lets CORS preflights (OPTIONS) and the 405 answers to GET and
// DELETE come from the gateway itself.
var Routes = []Route{
	{"Mcp", "ANY", "/mcp"},
	{"JsonRpc", "POST", "/jsonrpc"},
	{"Health", "GET", "/health"},
	{"Servers", "GET", "/servers"},
	{"ServerCapabilities", "GET", "/servers/{name}/capabilities"},
	{"ResourceMetadata", "GET", "/.well-known/oauth-protected-resource"},
	{"ResourceMetadataMcp", "GET", "/.well-known/oauth-protected-resource/mcp"},
}

// DefaultLogRetentionDays is the default of the LogRetentionDays parameter.
const DefaultLogRetentionDays = 30

// logRetentionValues are the retention periods CloudWatch Logs accepts.
var logRetentionValues = []int{1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653}

// The parameters' patterns, checked by CloudFormation before anything is
// deployed, so that a bad value fails the deploy rather than the gateway's
// cold start (config.Validate checks the same).
const (
	originsPattern = `^(https?://[^,/\s]+(,https?://[^,/\s]+)*)?$`
	tenantPattern  = `^([a-z0-9][a-z0-9-]{0,62})?$`
)

// Function is one function as the template deploys it: the gateway, or a
// function of the catalog.
type Function struct {
	// Path is the function's folder under functions/.
	Path string
	// LogicalID is its template logical ID, [invoke.LogicalID] of Path.
	LogicalID string
	// Name is its deployed name after "<stack>-", [invoke.FunctionName] of Path.
	Name   string
	Limits catalog.Limits
	// Table and Blobs are its store access; the gateway's is special (it reads API keys only).
	Table, Blobs catalog.Access
	// Serves names the tools and resources it serves; empty for the gateway.
	Serves []string
}

// Functions returns every function the template deploys: the gateway first,
// then the catalog's functions in path order.
func Functions(cat *catalog.Catalog) []Function {
	out := []Function{{
		Path: GatewayPath, LogicalID: invoke.LogicalID(GatewayPath), Name: invoke.FunctionName(GatewayPath),
		Limits: GatewayLimits, Table: catalog.Read,
	}}
	for _, f := range cat.Functions() {
		out = append(out, Function{
			Path: f.Path, LogicalID: invoke.LogicalID(f.Path), Name: invoke.FunctionName(f.Path),
			Limits: f.Limits, Table: f.Table, Blobs: f.Blobs,
			Serves: append(append([]string(nil), f.Tools...), f.Resources...),
		})
	}
	return out
}

// The IAM actions each level of access grants. TransactWriteItems has no
// action of its own: each item in a transaction is authorised by PutItem,
// DeleteItem or ConditionCheckItem, so read-write grants those three.
var (
	tableRead        = []string{"dynamodb:GetItem", "dynamodb:Query"}
	tableWrite       = []string{"dynamodb:PutItem", "dynamodb:DeleteItem", "dynamodb:ConditionCheckItem"}
	bucketObjectRead = []string{"s3:GetObject"}
	bucketObjectRW   = []string{"s3:PutObject", "s3:DeleteObject"}
)

type envVar struct{ Name, Value string }

type statement struct {
	Sid         string
	Actions     []string
	Resources   []string
	LeadingKeys []string
}

type templateFunction struct {
	LogicalID, LogGroupID, Name, Comment, Description string
	Timeout, MemoryMB, Reserved                       int
	Env                                               []envVar
	Statements                                        []statement
	Routes                                            []Route
}

type templateData struct {
	Functions                     []templateFunction
	PK, SK, ExpiresAt             string
	OriginsPattern, TenantPattern string
	DefaultRetention              int
	RetentionValues               []string
}

// logGroupID returns the logical ID of the log group of the function whose
// logical ID is id.
func logGroupID(id string) string { return strings.TrimSuffix(id, "Function") + "LogGroup" }

// templateFunctionOf describes f for the template. targets are the functions
// the gateway may invoke: exactly those, by name, and not itself.
func templateFunctionOf(f Function, targets []Function) templateFunction {
	tf := templateFunction{
		LogicalID: f.LogicalID, LogGroupID: logGroupID(f.LogicalID), Name: f.Name,
		Timeout: int(f.Limits.Timeout / time.Second), MemoryMB: f.Limits.MemoryMB, Reserved: f.Limits.ReservedConcurrency,
		Env: []envVar{{config.EnvTable, "!Ref Table"}},
	}
	if f.Path == GatewayPath {
		tf.Comment = "The gateway: authenticates callers, answers from the catalog, and invokes the functions below."
		tf.Description = "Switchboard gateway: MCP over Streamable HTTP"
		tf.Env = append(tf.Env,
			envVar{config.EnvFunctionPrefix, "!Sub ${AWS::StackName}-"},
			envVar{config.EnvAllowedOrigins, "!Ref AllowedOrigins"},
			envVar{config.EnvAnonymousTenant, "!Ref AnonymousTenant"},
		)
		var arns []string
		for _, t := range targets {
			if t.Path != GatewayPath {
				arns = append(arns, "!Sub arn:${AWS::Partition}:lambda:${AWS::Region}:${AWS::AccountId}:function:${AWS::StackName}-"+t.Name)
			}
		}
		tf.Statements = []statement{
			{Sid: "InvokeFunctions", Actions: []string{"lambda:InvokeFunction"}, Resources: arns},
			{Sid: "ReadApiKeys", Actions: tableRead, Resources: []string{"!GetAtt Table.Arn"}, LeadingKeys: []string{apikey.Partition}},
		}
		tf.Routes = Routes
		return tf
	}
	tf.Comment = fmt.Sprintf("functions/%s serves %s.", f.Path, strings.Join(f.Serves, ", "))
	tf.Description = "Switchboard " + strings.Join(f.Serves, ", ")
	switch f.Table {
	case catalog.Read:
		tf.Statements = append(tf.Statements, statement{Sid: "TableRead", Actions: tableRead, Resources: []string{"!GetAtt Table.Arn"}})
	case catalog.ReadWrite:
		tf.Statements = append(tf.Statements, statement{Sid: "TableReadWrite", Actions: concat(tableRead, tableWrite), Resources: []string{"!GetAtt Table.Arn"}})
	}
	if f.Blobs != catalog.NoAccess {
		tf.Env = append(tf.Env, envVar{config.EnvBucket, "!Ref Bucket"})
		tf.Statements = append(tf.Statements, statement{Sid: "BucketList", Actions: []string{"s3:ListBucket"}, Resources: []string{"!GetAtt Bucket.Arn"}})
		objects := statement{Sid: "BucketObjectsRead", Actions: bucketObjectRead, Resources: []string{"!Sub ${Bucket.Arn}/*"}}
		if f.Blobs == catalog.ReadWrite {
			objects.Sid, objects.Actions = "BucketObjectsReadWrite", concat(bucketObjectRead, bucketObjectRW)
		}
		tf.Statements = append(tf.Statements, objects)
	}
	return tf
}

func concat(a, b []string) []string { return append(append([]string(nil), a...), b...) }

// quote renders s as a YAML scalar in quotes: single quotes, in which
// nothing is escaped but the single quote itself (doubled), unless s holds
// characters that only double quotes can escape.
func quote(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f }) < 0 {
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	}
	var b strings.Builder
	if err := jsonEncoder(&b).Encode(s); err != nil {
		panic(err) // a string always encodes
	}
	return strings.TrimSuffix(b.String(), "\n") // a JSON string is a YAML double-quoted scalar
}

var samTemplate = template.Must(template.New("template.yaml").Funcs(template.FuncMap{
	"quote": quote,
	"join":  strings.Join,
}).Parse(infra.Template))

// Template renders template.yaml for cat.
func Template(cat *catalog.Catalog) ([]byte, error) {
	data := templateData{
		PK: store.AttrPK, SK: store.AttrSK, ExpiresAt: store.AttrExpiresAt,
		OriginsPattern: originsPattern, TenantPattern: tenantPattern,
		DefaultRetention: DefaultLogRetentionDays,
	}
	for _, d := range logRetentionValues {
		data.RetentionValues = append(data.RetentionValues, fmt.Sprint(d))
	}
	seen := map[string]string{}
	all := Functions(cat)
	for _, f := range all {
		for _, key := range []string{"logical ID " + f.LogicalID, "name " + f.Name} {
			if other, ok := seen[key]; ok {
				return nil, fmt.Errorf("deploy: functions %s and %s would both have the %s; rename one", other, f.Path, key)
			}
			seen[key] = f.Path
		}
		data.Functions = append(data.Functions, templateFunctionOf(f, all))
	}
	var b bytes.Buffer
	if err := samTemplate.Execute(&b, data); err != nil {
		return nil, fmt.Errorf("deploy: rendering template.yaml: %w", err)
	}
	return b.Bytes(), nil
}

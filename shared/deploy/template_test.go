package deploy

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/awslabs/goformation/v7"
	"github.com/awslabs/goformation/v7/cloudformation"
	"github.com/awslabs/goformation/v7/intrinsics"
	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/apikey"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/connector"
	"github.com/switchboard-dev/switchboard/shared/elicit"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/keyfile"
	"github.com/switchboard-dev/switchboard/shared/keyring"
	"github.com/switchboard-dev/switchboard/shared/oauth"
	"github.com/switchboard-dev/switchboard/shared/quota"
	"github.com/switchboard-dev/switchboard/shared/seal/localkey"
	"github.com/switchboard-dev/switchboard/shared/tenantcreds"
)

// root is the repository root, relative to this package.
const root = "../.."

// The intrinsic functions as they appear in a template parsed without
// resolving intrinsics, to compare against.
func ref(name string) any    { return map[string]any{"Ref": name} }
func sub(s string) any       { return map[string]any{"Fn::Sub": s} }
func getAtt(s string) any    { return map[string]any{"Fn::GetAtt": s} }
func strs(s ...string) []any { return anys(s) }

func anys[T any](s []T) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// parsed is a template parsed twice: by goformation, with intrinsics resolved
// as its users would, and raw, with intrinsics kept as they are written.
type parsed struct {
	typed *cloudformation.Template
	raw   map[string]any
}

// unmodelled matches the lines of properties goformation v7.14.9 (the last
// version the module proxy here serves) predates and refuses as unknown:
// the REST API integration's ResponseTransferMode (November 2025). The typed
// parse goes without them; the raw one, which the tests of those
// properties read, keeps them.
var unmodelled = regexp.MustCompile(`(?m)^ +ResponseTransferMode: .*\n`)

func parseTemplate(t *testing.T, data []byte) parsed {
	t.Helper()
	typed, err := goformation.ParseYAML(unmodelled.ReplaceAll(data, nil))
	if err != nil {
		t.Fatalf("goformation cannot parse the template: %v", err)
	}
	js, err := intrinsics.ProcessYAML(data, &intrinsics.ProcessorOptions{NoProcess: true})
	if err != nil {
		t.Fatalf("reading the template's YAML: %v", err)
	}
	var raw map[string]any
	if err := json.Unmarshal(js, &raw); err != nil {
		t.Fatalf("decoding the template: %v", err)
	}
	return parsed{typed: typed, raw: raw}
}

func readTemplate(t *testing.T) parsed {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, TemplateFile))
	if err != nil {
		t.Fatal(err)
	}
	return parseTemplate(t, data)
}

// resource returns the raw resource id, failing the test if it is missing.
func (p parsed) resource(t *testing.T, id string) map[string]any {
	t.Helper()
	r, ok := p.raw["Resources"].(map[string]any)[id].(map[string]any)
	if !ok {
		t.Fatalf("the template has no resource %s", id)
	}
	return r
}

func props(r map[string]any) map[string]any {
	p, _ := r["Properties"].(map[string]any)
	return p
}

// serverlessFunctions returns the logical IDs of the template's functions, sorted.
func (p parsed) serverlessFunctions() []string {
	var ids []string
	for id := range p.typed.GetAllServerlessFunctionResources() {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// grants is what a level of access allows, as the spec states it; the
// template must say exactly this.
type grants struct{ table, bucketList, bucketObjects []string }

// grantsFor is what f's access allows: DeleteItem only to a function whose
// catalog entry deletes.
func grantsFor(f catalog.Function) grants {
	var g grants
	switch f.Table {
	case catalog.Read:
		g.table = []string{"dynamodb:GetItem", "dynamodb:Query"}
	case catalog.ReadPut:
		g.table = []string{"dynamodb:GetItem", "dynamodb:Query", "dynamodb:PutItem"}
	case catalog.ReadWrite:
		g.table = []string{"dynamodb:GetItem", "dynamodb:Query", "dynamodb:PutItem", "dynamodb:ConditionCheckItem"}
		if f.Deletes {
			g.table = append(g.table, "dynamodb:DeleteItem")
		}
	}
	blobs := f.Blobs
	switch blobs {
	case catalog.Read:
		g.bucketList, g.bucketObjects = []string{"s3:ListBucket"}, []string{"s3:GetObject"}
	case catalog.ReadWrite:
		g.bucketList, g.bucketObjects = []string{"s3:ListBucket"}, []string{"s3:GetObject", "s3:PutObject", "s3:DeleteObject"}
	}
	return g
}

// wantToolFunction returns the raw properties a tool function must have
// (beside those Globals gives every function), derived from its catalog entry.
func wantToolFunction(f catalog.Function) map[string]any {
	name := invoke.FunctionName(f.Path)
	env := map[string]any{config.EnvTable: ref("Table")}
	var statements []any
	// A statement that exists only under a condition is a policy of its own, wrapped whole in Fn::If.
	var conditional []any
	onlyIf := func(cond string, st map[string]any) {
		conditional = append(conditional, ifv(cond, map[string]any{"Statement": []any{st}}, noValue))
	}
	bucketEnv, bucketArn, bucketObjs := ref("Bucket"), getAtt("Bucket.Arn"), []any{sub("${Bucket.Arn}/*")}
	if len(f.BlobKeys) > 0 {
		bucketObjs = nil
		for _, k := range f.BlobKeys {
			bucketObjs = append(bucketObjs, sub("${Bucket.Arn}/"+k))
		}
	}
	if f.Trigger != nil {
		bucketEnv, bucketArn, bucketObjs = bucketNameRaw, bucketArnRaw, []any{bucketObjsRaw}
	}
	if f.Trigger != nil && f.Trigger.S3 != nil {
		// What fails after Lambda's retries goes to its failure queue.
		statements = append(statements, map[string]any{"Sid": "SendFailedEvents", "Effect": "Allow", "Action": strs("sqs:SendMessage"),
			"Resource": []any{getAtt(failureQueueID(invoke.LogicalID(f.Path)) + ".Arn")}})
	}
	// The table and the bucket are the function's own only with tenant
	// isolation off; on, it assumes the tenant role.
	g := grantsFor(f)
	if g.table != nil {
		sid := map[catalog.Access]string{catalog.Read: "TableRead", catalog.ReadPut: "TableReadPut", catalog.ReadWrite: "TableReadWrite"}[f.Table]
		onlyIf(TenantIsolationOff, map[string]any{"Sid": sid, "Effect": "Allow", "Action": strs(g.table...), "Resource": []any{getAtt("Table.Arn")}})
	}
	if g.table != nil || g.bucketObjects != nil {
		env[config.EnvTenantRoleARN] = ifv(TenantIsolationOn, getAtt(TenantRoleLogicalID+".Arn"), noValue)
		env[config.EnvTableARN] = ifv(TenantIsolationOn, getAtt("Table.Arn"), noValue)
		onlyIf(TenantIsolationOn, map[string]any{"Sid": "AssumeTenantRole", "Effect": "Allow", "Action": strs("sts:AssumeRole", "sts:TagSession"),
			"Resource": []any{getAtt(TenantRoleLogicalID + ".Arn")}})
	}
	if f.Connects && f.Trigger != nil {
		// The scheduled sync sweeps the sync index as itself.
		onlyIf(TenantIsolationOn, map[string]any{"Sid": "SweepSyncIndex", "Effect": "Allow", "Action": strs("dynamodb:Query", "dynamodb:DeleteItem"),
			"Resource":  []any{getAtt("Table.Arn")},
			"Condition": map[string]any{"ForAllValues:StringEquals": map[string]any{"dynamodb:LeadingKeys": strs(connector.SyncIndexPartition)}}})
	}
	if f.Table == catalog.ReadWrite && strings.HasPrefix(f.Path, "vector/") {
		onlyIf(TenantIsolationOn, map[string]any{"Sid": "ReadQuotaOverrides", "Effect": "Allow", "Action": strs("dynamodb:GetItem"),
			"Resource":  []any{getAtt("Table.Arn")},
			"Condition": map[string]any{"ForAllValues:StringEquals": map[string]any{"dynamodb:LeadingKeys": strs(quota.OverridePK)}}})
	}
	if g.bucketObjects != nil {
		env[config.EnvBucket] = bucketEnv
		env[config.EnvBucketARN] = ifv(TenantIsolationOn, bucketArn, noValue)
		env[config.EnvBucketKeyARN] = ifv(TenantIsolationWithKmsKey, ref("KmsKeyArn"), noValue)
		sid := map[catalog.Access]string{catalog.Read: "BucketObjectsRead", catalog.ReadWrite: "BucketObjectsReadWrite"}[f.Blobs]
		onlyIf(TenantIsolationOff, map[string]any{"Sid": "BucketList", "Effect": "Allow", "Action": strs(g.bucketList...), "Resource": []any{bucketArn}})
		onlyIf(TenantIsolationOff, map[string]any{"Sid": sid, "Effect": "Allow", "Action": strs(g.bucketObjects...), "Resource": bucketObjs})
	}
	if len(f.Invokes) > 0 {
		env[config.EnvFunctionPrefix] = sub("${AWS::StackName}-")
		var arns []any
		for _, p := range f.Invokes {
			arns = append(arns, sub("arn:${AWS::Partition}:lambda:${AWS::Region}:${AWS::AccountId}:function:${AWS::StackName}-"+invoke.FunctionName(p)))
		}
		statements = append(statements, map[string]any{"Sid": "InvokeFunctions", "Effect": "Allow", "Action": strs("lambda:InvokeFunction"), "Resource": arns})
		// The tools it calls count against the caller's rate limits, kept as the gateway keeps them.
		env[config.EnvRateLimits] = ref("RateLimits")
		onlyIf(TenantIsolationOn, map[string]any{"Sid": "ReadRateLimitOverrides", "Effect": "Allow", "Action": strs("dynamodb:GetItem"),
			"Resource":  []any{getAtt("Table.Arn")},
			"Condition": map[string]any{"ForAllValues:StringEquals": map[string]any{"dynamodb:LeadingKeys": strs("_limits")}}})
		onlyIf(TenantIsolationOn, map[string]any{"Sid": "KeepRateLimits", "Effect": "Allow", "Action": strs("dynamodb:GetItem", "dynamodb:PutItem"),
			"Resource":  []any{getAtt("Table.Arn")},
			"Condition": map[string]any{"ForAllValues:StringLike": map[string]any{"dynamodb:LeadingKeys": strs("t#*#limits")}}})
	}
	if f.Pipeline {
		env[config.EnvPipelineARN] = ref(PipelineLogicalID)
		statements = append(statements, map[string]any{"Sid": "RunPipeline", "Effect": "Allow", "Action": strs("states:StartSyncExecution"), "Resource": []any{ref(PipelineLogicalID)}})
	}
	model := func(kind, cond, param, def string) any {
		account := ""
		if kind == "inference-profile" {
			account = "${AWS::AccountId}"
		}
		arn := "arn:${AWS::Partition}:bedrock:${AWS::Region}:" + account + ":" + kind + "/"
		return ifv(cond, sub(arn+"${"+param+"}"), sub(arn+def))
	}
	if f.Embeds {
		env[config.EnvEmbedder] = ref("Embedder")
		env[config.EnvEmbeddingModel] = ifv("HasEmbeddingModel", ref("EmbeddingModel"), noValue)
		onlyIf("EmbedderIsBedrock", map[string]any{"Sid": "BedrockEmbed", "Effect": "Allow", "Action": strs("bedrock:InvokeModel"),
			"Resource": []any{model("foundation-model", "HasEmbeddingModel", "EmbeddingModel", "amazon.titan-embed-text-v2:0")}})
	}
	if f.Generates {
		env[config.EnvGenerator] = ref("Generator")
		env[config.EnvGenerationModel] = ifv("HasGenerationModel", ref("GenerationModel"), noValue)
		actions := strs("bedrock:InvokeModel")
		if f.StreamsReply {
			actions = strs("bedrock:InvokeModel", "bedrock:InvokeModelWithResponseStream")
		}
		onlyIf("GeneratorIsBedrock", map[string]any{"Sid": "BedrockGenerate", "Effect": "Allow", "Action": actions,
			"Resource": []any{
				model("foundation-model", "HasGenerationModel", "GenerationModel", "amazon.nova-micro-v1:0"),
				model("inference-profile", "HasGenerationModel", "GenerationModel", "amazon.nova-micro-v1:0"),
			}})
	}
	if f.Connects {
		// The customer-managed key if given, else the stack's own key or
		// the key ring as ConnectorKeyMode says, in the secret or the
		// parameter KeyStore says; a key only for the purpose of connector
		// credentials. The stack's own key grants its use in its policy
		// (TestOnlyTheConnectorFunctionsMayUseTheConnectorKeyAndOnlyForCredentials),
		// so no role statement names it.
		env[config.EnvConnectorKey] = ifv(HasKmsKey, ref("KmsKeyArn"), ifv(UseConnectorKey, getAtt(ConnectorKeyLogicalID+".Arn"),
			ifv(KeyStoreIsSSM, getAtt(ConnectorKeysParameterLogicalID+".Reference"), ref(ConnectorKeysLogicalID))))
		env[config.EnvConnectorCacheTTL] = ref("ConnectorCacheTtl")
		onlyIf(UseConnectorKeySecret, map[string]any{"Sid": "ReadConnectorKeys", "Effect": "Allow", "Action": strs("secretsmanager:GetSecretValue"),
			"Resource": []any{ref(ConnectorKeysLogicalID)}})
		onlyIf(UseConnectorKeyParameter, map[string]any{"Sid": "ReadConnectorKeysParameter", "Effect": "Allow", "Action": strs("ssm:GetParameter"),
			"Resource": []any{sub("arn:${AWS::Partition}:ssm:${AWS::Region}:${AWS::AccountId}:parameter/switchboard/${AWS::StackName}/connector-keys")}})
		credentials := map[string]any{
			"StringEquals":              map[string]any{"kms:EncryptionContext:purpose": connector.CredentialsPurpose},
			"Null":                      map[string]any{"kms:EncryptionContext:tenant": "false", "kms:EncryptionContext:connector": "false"},
			"ForAllValues:StringEquals": map[string]any{"kms:EncryptionContextKeys": strs("purpose", "tenant", "connector", "principal")},
		}
		if f.Seals {
			onlyIf(HasKmsKey, map[string]any{"Sid": "SealConnectorCredentials", "Effect": "Allow", "Action": strs("kms:GenerateDataKey"),
				"Resource": []any{ref("KmsKeyArn")}, "Condition": credentials})
		}
		if f.Opens {
			onlyIf(HasKmsKey, map[string]any{"Sid": "OpenConnectorCredentials", "Effect": "Allow", "Action": strs("kms:Decrypt"),
				"Resource": []any{ref("KmsKeyArn")}, "Condition": credentials})
		}
	}
	if f.Embeds || f.Generates {
		// The provider's key by its secret's ARN, never the key itself.
		env[config.EnvOpenAIBaseURL] = ifv("HasOpenAIBaseUrl", ref("OpenAIBaseUrl"), noValue)
		env[config.EnvOpenAIAPIKey] = ifv("HasOpenAIApiKey", ref(OpenAIApiKeyLogicalID), noValue)
		onlyIf("HasOpenAIApiKey", map[string]any{"Sid": "ReadProviderKeys", "Effect": "Allow", "Action": strs("secretsmanager:GetSecretValue"),
			"Resource": []any{ref(OpenAIApiKeyLogicalID)}})
	}
	if f.Searches {
		// The Brave key by its secret's ARN, never the key itself.
		env[config.EnvWebSearchBackends] = ref("WebSearchBackends")
		env[config.EnvWebSearchBraveAPIKey] = ifv("HasBraveSearchApiKey", ref(BraveSearchApiKeyLogicalID), noValue)
		env[config.EnvWebSearchSearXNGURL] = ifv("HasWebSearchSearxngUrl", ref("WebSearchSearxngUrl"), noValue)
		env[config.EnvWebSearchCacheTTL] = ref("WebSearchCacheTtl")
		env[config.EnvWebSearchRate] = ref("WebSearchRate")
		onlyIf("HasBraveSearchApiKey", map[string]any{"Sid": "ReadWebSearchKeys", "Effect": "Allow", "Action": strs("secretsmanager:GetSecretValue"),
			"Resource": []any{ref(BraveSearchApiKeyLogicalID)}})
	}
	if f.MultiVector {
		// Late interaction's token embedder, its key by its secret's ARN.
		env[config.EnvMultiVector] = ref("MultiVector")
		env[config.EnvMultiVectorModel] = ifv("HasMultiVectorModel", ref("MultiVectorModel"), noValue)
		env[config.EnvMultiVectorURL] = ifv("HasMultiVectorUrl", ref("MultiVectorUrl"), noValue)
		env[config.EnvMultiVectorAPIKey] = ifv("HasMultiVectorApiKey", ref(MultiVectorApiKeyLogicalID), noValue)
		onlyIf("HasMultiVectorApiKey", map[string]any{"Sid": "ReadMultiVectorKey", "Effect": "Allow", "Action": strs("secretsmanager:GetSecretValue"),
			"Resource": []any{ref(MultiVectorApiKeyLogicalID)}})
	}
	if f.Blobs != catalog.NoAccess || f.Embeds || f.Generates || f.MultiVector {
		onlyIf(HasKmsKey, map[string]any{"Sid": "UseKmsKey", "Effect": "Allow", "Action": strs("kms:Decrypt", "kms:GenerateDataKey"),
			"Resource": []any{ref("KmsKeyArn")}})
	} else if f.Searches {
		onlyIf(HasKmsKey, map[string]any{"Sid": "UseKmsKey", "Effect": "Allow", "Action": strs("kms:Decrypt"), "Resource": []any{ref("KmsKeyArn")}})
	}
	want := map[string]any{
		"FunctionName": sub("${AWS::StackName}-" + name),
		"Timeout":      f.Limits.Timeout.Seconds(),
		"MemorySize":   float64(f.Limits.MemoryMB),
		"Environment":  map[string]any{"Variables": env},
	}
	if f.Limits.ReservedConcurrency > 0 {
		want["ReservedConcurrentExecutions"] = float64(f.Limits.ReservedConcurrency)
	}
	var policies []any
	if statements != nil {
		policies = append(policies, map[string]any{"Statement": statements})
	}
	if policies = append(policies, conditional...); policies != nil {
		want["Policies"] = policies
	}
	return want
}

// only keeps the keys of got that want has, and reports the ones want has and got lacks.
func only(got, want map[string]any) map[string]any {
	out := map[string]any{}
	for k := range want {
		if v, ok := got[k]; ok {
			out[k] = v
		}
	}
	return out
}

func TestTemplateParsesWithGoformation(t *testing.T) {
	p := readTemplate(t)
	if got := p.typed.Transform; got == nil || got.String == nil || *got.String != "AWS::Serverless-2016-10-31" {
		t.Errorf("Transform = %v, want AWS::Serverless-2016-10-31", got)
	}
	if _, err := p.typed.GetApiGatewayRestApiWithName("RestApi"); err != nil {
		t.Errorf("no AWS::ApiGateway::RestApi RestApi: %v", err)
	}
	if _, err := p.typed.GetApiGatewayV2ApiWithName("HttpApi"); err != nil {
		t.Errorf("no AWS::ApiGatewayV2::Api HttpApi: %v", err)
	}
}

func TestTemplateDeploysTheGatewayAndExactlyTheCatalogFunctions(t *testing.T) {
	p := readTemplate(t)
	want := []string{invoke.LogicalID(GatewayPath), invoke.LogicalID(KeyringPath)}
	for _, f := range catalog.Default().Functions() {
		want = append(want, invoke.LogicalID(f.Path))
	}
	sort.Strings(want)
	if diff := cmp.Diff(want, p.serverlessFunctions()); diff != "" {
		t.Errorf("functions in template.yaml mismatch (-catalog +template):\n%s", diff)
	}
}

func TestEveryFunctionRunsOnArm64WithItsOwnLogGroup(t *testing.T) {
	p := readTemplate(t)
	g, err := p.typed.GetServerlessGlobalFunction()
	if err != nil {
		t.Fatalf("template has no Globals.Function: %v", err)
	}
	gotGlobals := map[string]any{
		"Runtime": deref(g.Runtime), "Handler": deref(g.Handler), "Architectures": *g.Architectures,
		"CodeUri": g.CodeUri != nil && g.CodeUri.String != nil && *g.CodeUri.String == ".",
	}
	wantGlobals := map[string]any{"Runtime": "provided.al2023", "Handler": "bootstrap", "Architectures": []string{"arm64"}, "CodeUri": true}
	if diff := cmp.Diff(wantGlobals, gotGlobals); diff != "" {
		t.Errorf("Globals.Function mismatch (-want +got):\n%s", diff)
	}
	logging := p.raw["Globals"].(map[string]any)["Function"].(map[string]any)["LoggingConfig"]
	if diff := cmp.Diff(map[string]any{"LogFormat": "JSON", "ApplicationLogLevel": "INFO", "SystemLogLevel": "INFO"}, logging); diff != "" {
		t.Errorf("Globals.Function.LoggingConfig mismatch (-want +got):\n%s", diff)
	}
	for id, f := range p.typed.GetAllServerlessFunctionResources() {
		t.Run(id, func(t *testing.T) {
			if f.Runtime != nil || f.Handler != nil || f.Architectures != nil || f.CodeUri != nil {
				t.Errorf("%s overrides the runtime, handler, architecture or code of Globals", id)
			}
			if got := f.AWSCloudFormationMetadata["BuildMethod"]; got != "makefile" {
				t.Errorf("Metadata.BuildMethod = %v, want makefile", got)
			}
			lg := strings.TrimSuffix(id, "Function") + "LogGroup"
			if !slices.Contains(f.AWSCloudFormationDependsOn, lg) {
				t.Errorf("DependsOn = %v, want %s, so that the log group exists before the function logs", f.AWSCloudFormationDependsOn, lg)
			}
			name := props(p.resource(t, id))["FunctionName"].(map[string]any)["Fn::Sub"].(string)
			lgProps := props(p.resource(t, lg))
			want := map[string]any{"LogGroupName": sub("/aws/lambda/" + name), "RetentionInDays": ref("LogRetentionDays"),
				"KmsKeyId": ifv(HasKmsKey, ref("KmsKeyArn"), noValue)}
			if diff := cmp.Diff(want, lgProps); diff != "" {
				t.Errorf("log group %s mismatch (-want +got):\n%s", lg, diff)
			}
		})
	}
	retention := p.raw["Parameters"].(map[string]any)["LogRetentionDays"].(map[string]any)
	if retention["Default"] != float64(30) {
		t.Errorf("LogRetentionDays defaults to %v, want 30", retention["Default"])
	}
}

func deref[T any](p *T) T {
	if p == nil {
		return *new(T)
	}
	return *p
}

func TestEveryToolFunctionHasItsCatalogLimitsAndExactlyItsAccess(t *testing.T) {
	p := readTemplate(t)
	for _, f := range catalog.Default().Functions() {
		t.Run(f.Path, func(t *testing.T) {
			want := wantToolFunction(f)
			got := props(p.resource(t, invoke.LogicalID(f.Path)))
			if diff := cmp.Diff(want, only(got, want)); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
			if _, ok := got["ReservedConcurrentExecutions"]; ok && f.Limits.ReservedConcurrency == 0 {
				t.Errorf("ReservedConcurrentExecutions is set, but the catalog leaves the function on the shared pool")
			}
			if got["Role"] != nil || got["Events"] != nil && f.Trigger == nil {
				t.Errorf("a tool function has its own Role or Events: %v %v", got["Role"], got["Events"])
			}
		})
	}
}

// TestTheTemplateFollowsAccessForEveryLevel renders the template for a
// catalog with a function at every level of table and bucket access, so that
// the rules hold for access the default catalog does not use yet.
func TestTheTemplateFollowsAccessForEveryLevel(t *testing.T) {
	levels := []catalog.Access{catalog.NoAccess, catalog.Read, catalog.ReadWrite}
	var tools []*catalog.Tool
	for _, table := range append(levels, catalog.ReadPut) {
		for _, blobs := range levels {
			level := func(a catalog.Access) string { return strings.ReplaceAll(cmpOr(string(a), "none"), "-", "") }
			name := "t_table_" + level(table) + "_blobs_" + level(blobs)
			tools = append(tools, &catalog.Tool{
				Name: name, Title: name, Description: "A test tool.", Family: "test", Function: "test/" + name,
				InputSchema: objectSchema, OutputSchema: objectSchema,
				Visibility: catalog.Public, Limits: catalog.Limits{Timeout: 7 * time.Second, MemoryMB: 128, ReservedConcurrency: 3},
				Table: table, Blobs: blobs,
			})
		}
	}
	// A read-write function that deletes.
	deletes := *tools[len(tools)-1]
	deletes.Name, deletes.Function, deletes.Table, deletes.Deletes = "t_deletes", "test/t_deletes", catalog.ReadWrite, true
	tools = append(tools, &deletes)
	// Access narrowed to some keys, and a function invoking others.
	narrowed := *tools[len(tools)-1]
	narrowed.Name, narrowed.Function = "t_narrowed", "test/t_narrowed"
	narrowed.BlobKeys, narrowed.Invokes = []string{"tenants/*/a/*", "tenants/*/b/*"}, []string{tools[0].Function, tools[1].Function}
	tools = append(tools, &narrowed)
	cat, err := catalog.New(tools, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	data, err := Template(cat)
	if err != nil {
		t.Fatal(err)
	}
	p := parseTemplate(t, data)
	for _, f := range cat.Functions() {
		t.Run(f.Path, func(t *testing.T) {
			want := wantToolFunction(f)
			got := props(p.resource(t, invoke.LogicalID(f.Path)))
			if diff := cmp.Diff(want, only(got, want)); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
			if _, ok := got["Policies"]; ok && want["Policies"] == nil {
				t.Errorf("a function without store access has Policies: %v", got["Policies"])
			}
		})
	}
}

func TestTheGatewayCanOnlyInvokeTheStackAndReadApiKeys(t *testing.T) {
	p := readTemplate(t)
	got := props(p.resource(t, invoke.LogicalID(GatewayPath)))
	want := map[string]any{
		"FunctionName": sub("${AWS::StackName}-gateway"),
		"Timeout":      ifv("FrontDoorIsRest", StreamingGatewayTimeout(catalog.Default()).Seconds(), GatewayLimits.Timeout.Seconds()),
		"MemorySize":   float64(GatewayLimits.MemoryMB),
		"Environment": map[string]any{"Variables": map[string]any{
			config.EnvTable:           ref("Table"),
			config.EnvFunctionPrefix:  sub("${AWS::StackName}-"),
			config.EnvAllowedOrigins:  ref("AllowedOrigins"),
			config.EnvAnonymousTenant: ref("AnonymousTenant"),
			config.EnvRateLimits:      ref("RateLimits"),
			config.EnvEmbedder:        ref("Embedder"),
			config.EnvRequestStateKeys: ifv(KeyStoreIsSSM, getAtt(RequestStateKeysParameterLogicalID+".Reference"), ifv("HasRequestStateKeysVersion",
				sub("${RequestStateKeys}#${RequestStateKeysVersion}"), ref(RequestStateKeysLogicalID))),
			config.EnvOAuthResource: ref("OAuthResource"),
			config.EnvOAuthIssuer:   ref("OAuthIssuer"),
			config.EnvOAuthJWKSURL:  ref("OAuthJwksUrl"),
			config.EnvOAuthTenantClaim: ifv("HasOAuthTenantClaim", ref("OAuthTenantClaim"),
				ifv(UseCognito, CognitoTenantClaim, ref("AWS::NoValue"))),
			config.EnvOAuthPrincipalClaim:   ref("OAuthPrincipalClaim"),
			config.EnvOAuthFacade:           ifv(UseCognito, "on", "off"),
			config.EnvOAuthProviderIssuer:   ifv(UseCognito, sub("https://cognito-idp.${AWS::Region}.${AWS::URLSuffix}/${UserPool}"), ref("AWS::NoValue")),
			config.EnvOAuthProviderClientID: ifv(UseCognito, ref(UserPoolClientLogicalID), ref("AWS::NoValue")),
			config.EnvOAuthSigningKeys: ifv(UseCognito,
				ifv("HasOAuthSigningKeysVersion", sub("${OAuthSigningKeys}#${OAuthSigningKeysVersion}"), ref(OAuthSigningKeysLogicalID)),
				ref("AWS::NoValue")),
		}},
		"Policies": []any{map[string]any{"Statement": []any{
			map[string]any{
				"Sid": "InvokeFunctions", "Effect": "Allow", "Action": strs("lambda:InvokeFunction"),
				"Resource": invokeTargets(),
			},
			map[string]any{
				"Sid": "ReadApiKeys", "Effect": "Allow", "Action": strs("dynamodb:GetItem", "dynamodb:Query"),
				"Resource":  []any{getAtt("Table.Arn")},
				"Condition": map[string]any{"ForAllValues:StringEquals": map[string]any{"dynamodb:LeadingKeys": strs(apikey.Partition)}},
			},
			map[string]any{
				"Sid": "ReadRateLimitOverrides", "Effect": "Allow", "Action": strs("dynamodb:GetItem"),
				"Resource":  []any{getAtt("Table.Arn")},
				"Condition": map[string]any{"ForAllValues:StringEquals": map[string]any{"dynamodb:LeadingKeys": strs("_limits")}},
			},
			map[string]any{
				"Sid": "KeepOAuthClients", "Effect": "Allow", "Action": strs("dynamodb:GetItem", "dynamodb:PutItem"),
				"Resource":  []any{getAtt("Table.Arn")},
				"Condition": map[string]any{"ForAllValues:StringEquals": map[string]any{"dynamodb:LeadingKeys": strs("_oauthclients", "_oauthclients#rate", "_oauthspent")}},
			},
			map[string]any{
				"Sid": "KeepRateLimits", "Effect": "Allow", "Action": strs("dynamodb:GetItem", "dynamodb:PutItem"),
				"Resource":  []any{getAtt("Table.Arn")},
				"Condition": map[string]any{"ForAllValues:StringLike": map[string]any{"dynamodb:LeadingKeys": strs("t#*#limits")}},
			},
		}},
			// The request-state keys, from the secret or the parameter KeyStore chooses.
			ifv(KeyStoreIsSecretsManager, map[string]any{"Statement": []any{map[string]any{
				"Sid": "ReadRequestStateKeys", "Effect": "Allow", "Action": strs("secretsmanager:GetSecretValue"),
				"Resource": []any{ref(RequestStateKeysLogicalID)},
			}}}, ref("AWS::NoValue")),
			ifv(KeyStoreIsSSM, map[string]any{"Statement": []any{map[string]any{
				"Sid": "ReadRequestStateKeysParameter", "Effect": "Allow", "Action": strs("ssm:GetParameter"),
				"Resource": []any{sub("arn:${AWS::Partition}:ssm:${AWS::Region}:${AWS::AccountId}:parameter/switchboard/${AWS::StackName}/request-state-keys")},
			}}}, ref("AWS::NoValue")),
			// The facade's signing keys, only with the stack's Cognito.
			ifv(UseCognito, map[string]any{"Statement": []any{map[string]any{
				"Sid": "ReadOAuthSigningKeys", "Effect": "Allow", "Action": strs("secretsmanager:GetSecretValue"),
				"Resource": []any{ref(OAuthSigningKeysLogicalID)},
			}}}, ref("AWS::NoValue")),
			ifv(HasKmsKey, map[string]any{"Statement": []any{map[string]any{
				"Sid": "UseKmsKey", "Effect": "Allow", "Action": strs("kms:Decrypt"), "Resource": []any{ref("KmsKeyArn")},
			}}}, ref("AWS::NoValue")),
		},
	}
	if diff := cmp.Diff(want, only(got, want)); diff != "" {
		t.Errorf("gateway mismatch (-want +got):\n%s", diff)
	}
	if _, ok := got["ReservedConcurrentExecutions"]; ok {
		t.Errorf("the gateway has ReservedConcurrentExecutions; it should scale with traffic")
	}
}

// TestACustomDomainPutsTheFrontDoorAtItsRoot: with DomainName, the chosen
// API is mapped at the domain's root (no stage in the path, so OAuth
// discovery at the host's root reaches the gateway), the MCP URL is on the
// domain, and a rule refuses a domain without a certificate.
func TestACustomDomainPutsTheFrontDoorAtItsRoot(t *testing.T) {
	p := readTemplate(t)
	conds := p.raw["Conditions"].(map[string]any)
	wantConds := map[string]any{
		"HasDomain": map[string]any{"Fn::Not": []any{map[string]any{"Fn::Equals": []any{ref("DomainName"), ""}}}},
		// goformation's reader writes !Condition X as X.
		"RestApiHasDomain": map[string]any{"Fn::And": strs("FrontDoorIsRest", "HasDomain")},
		"HttpApiHasDomain": map[string]any{"Fn::And": strs("FrontDoorIsHttpApi", "HasDomain")},
	}
	if diff := cmp.Diff(wantConds, only(conds, wantConds)); diff != "" {
		t.Errorf("domain conditions mismatch (-want +got):\n%s", diff)
	}
	for id, want := range map[string]struct {
		cond  string
		props map[string]any
	}{
		"RestApiDomain": {"RestApiHasDomain", map[string]any{"DomainName": ref("DomainName"), "RegionalCertificateArn": ref("DomainCertificateArn"),
			"EndpointConfiguration": map[string]any{"Types": strs("REGIONAL")}, "SecurityPolicy": "TLS_1_2"}},
		// No BasePath: the stage at the domain's root.
		"RestApiDomainMapping": {"RestApiHasDomain", map[string]any{"DomainName": ref("RestApiDomain"), "RestApiId": ref("RestApi"), "Stage": ref("RestApiStage")}},
		"HttpApiDomain": {"HttpApiHasDomain", map[string]any{"DomainName": ref("DomainName"),
			"DomainNameConfigurations": []any{map[string]any{"CertificateArn": ref("DomainCertificateArn"), "EndpointType": "REGIONAL", "SecurityPolicy": "TLS_1_2"}}}},
		"HttpApiDomainMapping": {"HttpApiHasDomain", map[string]any{"DomainName": ref("HttpApiDomain"), "ApiId": ref("HttpApi"), "Stage": ref("HttpApiStage")}},
	} {
		r := p.resource(t, id)
		if r["Condition"] != want.cond {
			t.Errorf("%s has condition %v, want %s", id, r["Condition"], want.cond)
		}
		if diff := cmp.Diff(want.props, props(r)); diff != "" {
			t.Errorf("%s mismatch (-want +got):\n%s", id, diff)
		}
	}
	rule := p.raw["Rules"].(map[string]any)["DomainNeedsACertificate"].(map[string]any)
	wantRule := map[string]any{
		"RuleCondition": map[string]any{"Fn::Not": []any{map[string]any{"Fn::Equals": []any{ref("DomainName"), ""}}}},
		"Assertions": []any{map[string]any{
			"Assert":            map[string]any{"Fn::Not": []any{map[string]any{"Fn::Equals": []any{ref("DomainCertificateArn"), ""}}}},
			"AssertDescription": "DomainName needs DomainCertificateArn, an ACM certificate for it in the stack's region",
		}},
	}
	if diff := cmp.Diff(wantRule, rule); diff != "" {
		t.Errorf("rule mismatch (-want +got):\n%s", diff)
	}
	if cond := p.raw["Outputs"].(map[string]any)["DomainTarget"].(map[string]any)["Condition"]; cond != "HasDomain" {
		t.Errorf("DomainTarget has condition %v, want HasDomain", cond)
	}
	params := p.raw["Parameters"].(map[string]any)
	domain := regexp.MustCompile(params["DomainName"].(map[string]any)["AllowedPattern"].(string))
	cert := regexp.MustCompile(params["DomainCertificateArn"].(map[string]any)["AllowedPattern"].(string))
	for v, want := range map[string]bool{"": true, "mcp.example.com": true, "a.b": true, "example": false, "MCP.example.com": false, "mcp.example.com/mcp": false, "-a.example.com": false} {
		if domain.MatchString(v) != want {
			t.Errorf("DomainName %q accepted = %v, want %v", v, !want, want)
		}
	}
	for v, want := range map[string]bool{"": true, "arn:aws:acm:eu-west-1:123456789012:certificate/0a1b2c3d-0000-4000-8000-000000000000": true, "arn:aws:iam::123456789012:role/x": false} {
		if cert.MatchString(v) != want {
			t.Errorf("DomainCertificateArn %q accepted = %v, want %v", v, !want, want)
		}
	}
}

// routeSet is Routes as "METHOD /path".
func routeSet() map[string]bool {
	want := map[string]bool{}
	for _, r := range Routes {
		want[r.Method+" "+r.Path] = true
	}
	return want
}

// TestTheFrontDoorParameterBuildsOneApiOrTheOther: every resource of the
// REST API exists only with FrontDoor RestStreaming, every resource of the
// HTTP API only with HttpApi, the streaming REST API is the default, and no
// function has API events of its own (SAM would give their permissions no
// condition).
func TestTheFrontDoorParameterBuildsOneApiOrTheOther(t *testing.T) {
	p := readTemplate(t)
	param := p.raw["Parameters"].(map[string]any)["FrontDoor"].(map[string]any)
	if param["Default"] != FrontDoorRestStreaming || !cmp.Equal(param["AllowedValues"], strs(FrontDoorRestStreaming, FrontDoorHttpApi)) {
		t.Errorf("FrontDoor = %v, want %s by default, or %s", param, FrontDoorRestStreaming, FrontDoorHttpApi)
	}
	conds := p.raw["Conditions"].(map[string]any)
	if !cmp.Equal(conds["FrontDoorIsRest"], map[string]any{"Fn::Equals": []any{ref("FrontDoor"), FrontDoorRestStreaming}}) ||
		!cmp.Equal(conds["FrontDoorIsHttpApi"], map[string]any{"Fn::Equals": []any{ref("FrontDoor"), FrontDoorHttpApi}}) {
		t.Errorf("front door conditions = %v, %v", conds["FrontDoorIsRest"], conds["FrontDoorIsHttpApi"])
	}
	var rest, httpAPI int
	for id, r := range p.raw["Resources"].(map[string]any) {
		r := r.(map[string]any)
		typ, cond := r["Type"].(string), r["Condition"]
		switch {
		case strings.HasPrefix(typ, "AWS::ApiGateway::") || id == "RestApiInvokesGateway":
			rest++
			// The account's logging role exists only with the REST API too (ApiGatewayLoggingCreate implies FrontDoorIsRest).
			if cond != "FrontDoorIsRest" && cond != "RestApiHasDomain" && cond != "ApiGatewayLoggingCreate" {
				t.Errorf("%s (%s) has condition %v, want FrontDoorIsRest", id, typ, cond)
			}
		case strings.HasPrefix(typ, "AWS::ApiGatewayV2::") || id == "HttpApiInvokesGateway":
			httpAPI++
			if cond != "FrontDoorIsHttpApi" && cond != "HttpApiHasDomain" {
				t.Errorf("%s (%s) has condition %v, want FrontDoorIsHttpApi", id, typ, cond)
			}
		case typ == "AWS::Serverless::Api" || typ == "AWS::Serverless::HttpApi":
			t.Errorf("%s is a %s, whose routes SAM would create under no condition", id, typ)
		case typ == "AWS::Serverless::Function":
			events, _ := props(r)["Events"].(map[string]any)
			for name, e := range events {
				if et := e.(map[string]any)["Type"]; et == "Api" || et == "HttpApi" {
					t.Errorf("%s has an %s event %s, whose permission SAM would create under no condition", id, et, name)
				}
			}
		}
	}
	if rest == 0 || httpAPI == 0 {
		t.Errorf("%d REST API resources and %d HTTP API resources, want both front doors", rest, httpAPI)
	}
}

// restPath is the path of the REST API resource id, from its parents.
func (p parsed) restPath(t *testing.T, id string) string {
	r := props(p.resource(t, id))
	parent := r["ParentId"]
	if cmp.Equal(parent, getAtt("RestApi.RootResourceId")) {
		return "/" + r["PathPart"].(string)
	}
	return p.restPath(t, parent.(map[string]any)["Ref"].(string)) + "/" + r["PathPart"].(string)
}

func TestTheRestApiStreamsEveryRouteToTheGateway(t *testing.T) {
	p := readTemplate(t)
	timeout := StreamingGatewayTimeout(catalog.Default())
	wantIntegration := map[string]any{
		"Type": "AWS_PROXY", "IntegrationHttpMethod": "POST",
		// InvokeWithResponseStream, not Invoke (2015-03-31/functions/.../invocations).
		"Uri":                  sub("arn:${AWS::Partition}:apigateway:${AWS::Region}:lambda:path/2021-11-15/functions/${GatewayFunction.Arn}/response-streaming-invocations"),
		"ResponseTransferMode": "STREAM",
		"TimeoutInMillis":      float64(timeout.Milliseconds()),
	}
	got := map[string]bool{}
	var methods []any
	for id, r := range p.raw["Resources"].(map[string]any) {
		if r.(map[string]any)["Type"] != "AWS::ApiGateway::Method" {
			continue
		}
		m := props(r.(map[string]any))
		got[m["HttpMethod"].(string)+" "+p.restPath(t, m["ResourceId"].(map[string]any)["Ref"].(string))] = true
		if diff := cmp.Diff(wantIntegration, m["Integration"]); diff != "" {
			t.Errorf("%s's integration mismatch (-want +got):\n%s", id, diff)
		}
		if m["AuthorizationType"] != "NONE" || !cmp.Equal(m["RestApiId"], ref("RestApi")) {
			t.Errorf("%s: authorization %v on API %v, want NONE (the gateway authenticates) on RestApi", id, m["AuthorizationType"], m["RestApiId"])
		}
		methods = append(methods, id)
	}
	if diff := cmp.Diff(routeSet(), got); diff != "" {
		t.Errorf("REST API routes mismatch (-want +got):\n%s", diff)
	}
	if timeout > MaxStreamingTimeout {
		t.Errorf("the integration's timeout %v is over the streaming maximum %v", timeout, MaxStreamingTimeout)
	}
	for _, f := range catalog.Default().Functions() {
		if f.Limits.Timeout >= timeout {
			t.Errorf("%s may run %v, as long as the gateway that waits for it (%v)", f.Path, f.Limits.Timeout, timeout)
		}
	}
	api := props(p.resource(t, "RestApi"))
	if !cmp.Equal(api["EndpointConfiguration"], map[string]any{"Types": strs("REGIONAL")}) {
		t.Errorf("REST API endpoint = %v, want REGIONAL (an edge-optimized one ends a stream silent for 30 s)", api["EndpointConfiguration"])
	}
	fd := frontDoorOf(catalog.Default())
	deployment := p.resource(t, fd.DeploymentID)
	sort.Slice(methods, func(i, j int) bool { return methods[i].(string) < methods[j].(string) })
	dependsOn := slices.Clone(deployment["DependsOn"].([]any))
	sort.Slice(dependsOn, func(i, j int) bool { return dependsOn[i].(string) < dependsOn[j].(string) })
	if !cmp.Equal(dependsOn, methods) {
		t.Errorf("the deployment depends on %v, want every method %v", dependsOn, methods)
	}
	stage := props(p.resource(t, "RestApiStage"))
	if !cmp.Equal(stage["DeploymentId"], ref(fd.DeploymentID)) || stage["StageName"] != RestStage {
		t.Errorf("stage = %v, want %s deploying %s", stage, RestStage, fd.DeploymentID)
	}
	checkInvokePermission(t, p, "RestApiInvokesGateway", "RestApi")
}

// checkInvokePermission checks that permission lets API Gateway's api, and
// only it, invoke the gateway (InvokeWithResponseStream needs
// lambda:InvokeFunction too).
func checkInvokePermission(t *testing.T, p parsed, permission, api string) {
	t.Helper()
	want := map[string]any{
		"Action": "lambda:InvokeFunction", "FunctionName": getAtt("GatewayFunction.Arn"), "Principal": "apigateway.amazonaws.com",
		"SourceArn": sub("arn:${AWS::Partition}:execute-api:${AWS::Region}:${AWS::AccountId}:${" + api + "}/*"),
	}
	if diff := cmp.Diff(want, props(p.resource(t, permission))); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", permission, diff)
	}
}

func TestTheHttpApiSendsEveryRouteToTheGateway(t *testing.T) {
	p := readTemplate(t)
	got := map[string]bool{}
	for id, r := range p.raw["Resources"].(map[string]any) {
		if r.(map[string]any)["Type"] != "AWS::ApiGatewayV2::Route" {
			continue
		}
		route := props(r.(map[string]any))
		got[route["RouteKey"].(string)] = true
		if !cmp.Equal(route["Target"], sub("integrations/${HttpApiIntegration}")) || !cmp.Equal(route["ApiId"], ref("HttpApi")) {
			t.Errorf("%s goes to %v on %v, want the gateway's integration on HttpApi", id, route["Target"], route["ApiId"])
		}
	}
	if diff := cmp.Diff(routeSet(), got); diff != "" {
		t.Errorf("HTTP API routes mismatch (-want +got):\n%s", diff)
	}
	want := map[string]any{"ApiId": ref("HttpApi"), "IntegrationType": "AWS_PROXY", "IntegrationUri": getAtt("GatewayFunction.Arn"), "PayloadFormatVersion": "2.0"}
	if diff := cmp.Diff(want, props(p.resource(t, "HttpApiIntegration"))); diff != "" {
		t.Errorf("HTTP API integration mismatch (-want +got):\n%s", diff)
	}
	if stage := props(p.resource(t, "HttpApiStage")); stage["StageName"] != "$default" || stage["AutoDeploy"] != true {
		t.Errorf("HTTP API stage = %v, want $default, deployed automatically", stage)
	}
	checkInvokePermission(t, p, "HttpApiInvokesGateway", "HttpApi")
}

// TestTheRestApiIsDeployedAgainWhenItsRoutesChange: CloudFormation deploys a
// REST API only with a new deployment resource, so its logical ID follows
// the routes.
func TestTheRestApiIsDeployedAgainWhenItsRoutesChange(t *testing.T) {
	before := frontDoorOf(catalog.Default()).DeploymentID
	saved := Routes
	defer func() { Routes = saved }()
	Routes = append(slices.Clone(saved), Route{"Extra", "GET", "/extra"})
	if after := frontDoorOf(catalog.Default()).DeploymentID; after == before {
		t.Errorf("deployment %s kept its logical ID after a route was added", before)
	}
}

func TestTheTableAndBucketAreProtectedAndKept(t *testing.T) {
	p := readTemplate(t)
	tests := []struct {
		id   string
		want map[string]any
	}{
		{"Table", map[string]any{
			"Type": "AWS::DynamoDB::Table", "DeletionPolicy": "Retain", "UpdateReplacePolicy": "Retain",
			"Properties": map[string]any{
				"BillingMode": "PAY_PER_REQUEST",
				"AttributeDefinitions": []any{
					map[string]any{"AttributeName": "pk", "AttributeType": "S"},
					map[string]any{"AttributeName": "sk", "AttributeType": "S"},
				},
				"KeySchema": []any{
					map[string]any{"AttributeName": "pk", "KeyType": "HASH"},
					map[string]any{"AttributeName": "sk", "KeyType": "RANGE"},
				},
				"TimeToLiveSpecification":          map[string]any{"AttributeName": "expires_at", "Enabled": true},
				"PointInTimeRecoverySpecification": map[string]any{"PointInTimeRecoveryEnabled": true},
				// KMS: the AWS-managed key, or KmsKeyArn's.
				"SSESpecification": map[string]any{"SSEEnabled": true, "SSEType": "KMS",
					"KMSMasterKeyId": ifv(HasKmsKey, ref("KmsKeyArn"), noValue)},
			},
		}},
		{"Bucket", map[string]any{
			"Type": "AWS::S3::Bucket", "DeletionPolicy": "Retain", "UpdateReplacePolicy": "Retain",
			"Properties": map[string]any{
				"BucketEncryption": map[string]any{"ServerSideEncryptionConfiguration": []any{
					map[string]any{
						"ServerSideEncryptionByDefault": map[string]any{"SSEAlgorithm": ifv(HasKmsKey, "aws:kms", "AES256"),
							"KMSMasterKeyID": ifv(HasKmsKey, ref("KmsKeyArn"), noValue)},
						"BucketKeyEnabled": ifv(HasKmsKey, true, noValue),
					},
				}},
				"VersioningConfiguration": map[string]any{"Status": "Enabled"},
				"PublicAccessBlockConfiguration": map[string]any{
					"BlockPublicAcls": true, "BlockPublicPolicy": true, "IgnorePublicAcls": true, "RestrictPublicBuckets": true,
				},
				"OwnershipControls": map[string]any{"Rules": []any{map[string]any{"ObjectOwnership": "BucketOwnerEnforced"}}},
			},
		}},
		{"BucketPolicy", map[string]any{
			"Type": "AWS::S3::BucketPolicy",
			"Properties": map[string]any{
				"Bucket": ref("Bucket"),
				"PolicyDocument": map[string]any{"Version": "2012-10-17", "Statement": []any{map[string]any{
					"Sid": "DenyInsecureTransport", "Effect": "Deny", "Principal": "*", "Action": "s3:*",
					"Resource":  []any{getAtt("Bucket.Arn"), sub("${Bucket.Arn}/*")},
					"Condition": map[string]any{"Bool": map[string]any{"aws:SecureTransport": "false"}},
				}}},
			},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			got := p.resource(t, tc.id)
			gotProps := only(props(got), tc.want["Properties"].(map[string]any))
			got = only(got, tc.want)
			got["Properties"] = gotProps
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := p.typed.GetDynamoDBTableWithName("Table"); err != nil {
		t.Errorf("goformation does not see the table: %v", err)
	}
	if _, err := p.typed.GetS3BucketWithName("Bucket"); err != nil {
		t.Errorf("goformation does not see the bucket: %v", err)
	}
}

// TestTheRequestStateKeysAreGeneratedAndReachOnlyTheGateway checks the key
// ring that seals request states: made by Secrets Manager (KMS-encrypted), a
// JSON object whose one key, k1, is 64 random characters, which
// elicit.ParseKeyring accepts; named (by ARN) in the gateway's environment
// alone, never resolved into it.
func TestTheRequestStateKeysAreGeneratedAndReachOnlyTheGateway(t *testing.T) {
	p := readTemplate(t)
	secret, err := p.typed.GetSecretsManagerSecretWithName(RequestStateKeysLogicalID)
	if err != nil {
		t.Fatalf("goformation does not see the secret: %v", err)
	}
	g := secret.GenerateSecretString
	if g == nil || g.SecretStringTemplate == nil || *g.SecretStringTemplate != "{}" || g.GenerateStringKey == nil || *g.GenerateStringKey != "k1" ||
		g.PasswordLength == nil || *g.PasswordLength < elicit.MinSecretBytes || g.ExcludePunctuation == nil || !*g.ExcludePunctuation {
		t.Errorf("GenerateSecretString = %+v, want {} with k1: at least %d letters and digits", g, elicit.MinSecretBytes)
	}
	if _, err := elicit.ParseKeyring(`{"k1":"` + strings.Repeat("a", *g.PasswordLength) + `"}`); err != nil {
		t.Errorf("a generated key ring would not parse: %v", err)
	}
	for _, f := range Functions(catalog.Default()) {
		env := props(p.resource(t, f.LogicalID))["Environment"].(map[string]any)["Variables"].(map[string]any)
		if _, ok := env[config.EnvRequestStateKeys]; ok != (f.Path == GatewayPath) {
			t.Errorf("%s has %s: %v; only the gateway should", f.Path, config.EnvRequestStateKeys, ok)
		}
	}
}

// TestTheCatalogNamesTheConnectorsSyncIndex: the partition the template and
// the session policies let connector functions write is the one package
// connector keeps its sync index in.
func TestTheCatalogNamesTheConnectorsSyncIndex(t *testing.T) {
	if catalog.ConnectorSyncIndex != connector.SyncIndexPartition {
		t.Errorf("catalog.ConnectorSyncIndex = %q, connector.SyncIndexPartition = %q", catalog.ConnectorSyncIndex, connector.SyncIndexPartition)
	}
}

// TestExactlyOneMechanismSealsConnectorCredentials checks the conditions
// that choose what seals connector credentials: KmsKeyArn when given; else
// ConnectorKeyMode's choice, the stack's own KMS key (the default) or the key
// ring, in the secret or the parameter KeyStore chooses; each created under
// its condition alone.
func TestExactlyOneMechanismSealsConnectorCredentials(t *testing.T) {
	p := readTemplate(t)
	mode := p.raw["Parameters"].(map[string]any)["ConnectorKeyMode"].(map[string]any)
	if mode["Default"] != "kms" || !cmp.Equal(mode["AllowedValues"], []any{"kms", "secret"}) {
		t.Errorf("ConnectorKeyMode: default %v, allowed %v; want kms of kms and secret", mode["Default"], mode["AllowedValues"])
	}
	noKey := map[string]any{"Fn::Equals": []any{ref("KmsKeyArn"), ""}}
	conds := p.raw["Conditions"].(map[string]any)
	want := map[string]any{"Fn::And": []any{noKey, map[string]any{"Fn::Equals": []any{ref("ConnectorKeyMode"), "kms"}}}}
	if diff := cmp.Diff(want, conds[UseConnectorKey]); diff != "" {
		t.Errorf("condition %s mismatch (-want +got):\n%s", UseConnectorKey, diff)
	}
	if r := p.resource(t, ConnectorKeyLogicalID); r["Condition"] != UseConnectorKey {
		t.Errorf("%s has condition %v, want %s", ConnectorKeyLogicalID, r["Condition"], UseConnectorKey)
	}
	// The ring: in the secret with KeyStore secretsmanager, in the parameter with ssm.
	ssm := map[string]any{"Fn::Equals": []any{ref("KeyStore"), "ssm"}}
	ring := map[string]any{"Fn::Equals": []any{ref("ConnectorKeyMode"), "secret"}}
	for _, c := range []struct {
		cond, resource string
		store          any
	}{
		{UseConnectorKeySecret, ConnectorKeysLogicalID, map[string]any{"Fn::Not": []any{ssm}}},
		{UseConnectorKeyParameter, ConnectorKeysParameterLogicalID, ssm},
	} {
		if diff := cmp.Diff(map[string]any{"Fn::And": []any{noKey, ring, c.store}}, conds[c.cond]); diff != "" {
			t.Errorf("condition %s mismatch (-want +got):\n%s", c.cond, diff)
		}
		if r := p.resource(t, c.resource); r["Condition"] != c.cond {
			t.Errorf("%s has condition %v, want %s", c.resource, r["Condition"], c.cond)
		}
	}
	if keys := p.resourcesOfType("AWS::KMS::Key"); len(keys) != 1 || keys[ConnectorKeyLogicalID] == nil {
		t.Errorf("the template creates KMS keys %v, want %s alone", slices.Collect(maps.Keys(keys)), ConnectorKeyLogicalID)
	}
}

// TestOnlyTheConnectorFunctionsMayUseTheConnectorKeyAndOnlyForCredentials
// checks the stack's own key's policy: the functions that seal connector
// credentials may generate data keys, those that open them decrypt, exactly
// those, and only under the encryption context of connector credentials.
func TestOnlyTheConnectorFunctionsMayUseTheConnectorKeyAndOnlyForCredentials(t *testing.T) {
	p := readTemplate(t)
	key := props(p.resource(t, ConnectorKeyLogicalID))
	if key["EnableKeyRotation"] != true {
		t.Errorf("EnableKeyRotation = %v, want true", key["EnableKeyRotation"])
	}
	roles := map[string][]any{} // statement -> roles
	for _, f := range Functions(catalog.Default()) {
		if f.Seals {
			roles["SealConnectorCredentials"] = append(roles["SealConnectorCredentials"], getAtt(f.LogicalID+"Role.Arn"))
		}
		if f.Opens {
			roles["OpenConnectorCredentials"] = append(roles["OpenConnectorCredentials"], getAtt(f.LogicalID+"Role.Arn"))
		}
	}
	if len(roles) != 2 {
		t.Fatalf("the catalog's functions that seal and open connector credentials: %v", roles)
	}
	actions := map[string]any{"SealConnectorCredentials": "kms:GenerateDataKey", "OpenConnectorCredentials": "kms:Decrypt"}
	usage := []string{"kms:Decrypt", "kms:Encrypt", "kms:GenerateDataKey", "kms:ReEncrypt", "kms:*"}
	seen := 0
	for _, st := range key["KeyPolicy"].(map[string]any)["Statement"].([]any) {
		st := st.(map[string]any)
		sid, _ := st["Sid"].(string)
		if want, ok := roles[sid]; ok {
			seen++
			if got := st["Principal"].(map[string]any)["AWS"]; !reflect.DeepEqual(got, want) {
				t.Errorf("%s: the key's users are %v, want exactly %v", sid, got, want)
			}
			if st["Action"] != actions[sid] || st["Resource"] != "*" {
				t.Errorf("%s: its users may %v on %v, want %v on the key", sid, st["Action"], st["Resource"], actions[sid])
			}
			// The purpose of connector credentials, naming a tenant and a
			// connector (and, for one's own, a principal), nothing else.
			want := map[string]any{
				"StringEquals":              map[string]any{"kms:EncryptionContext:purpose": connector.CredentialsPurpose},
				"Null":                      map[string]any{"kms:EncryptionContext:tenant": "false", "kms:EncryptionContext:connector": "false"},
				"ForAllValues:StringEquals": map[string]any{"kms:EncryptionContextKeys": strs("purpose", "tenant", "connector", "principal")},
			}
			if !reflect.DeepEqual(st["Condition"], want) {
				t.Errorf("%s: its condition is %v, want %v", sid, st["Condition"], want)
			}
			continue
		}
		if a := fmt.Sprint(st["Action"]); slices.ContainsFunc(usage, func(u string) bool { return strings.Contains(a, u) }) {
			t.Errorf("statement %v grants %s: only the connector functions may use the key", sid, a)
		}
	}
	if seen != 2 {
		t.Errorf("the key policy has %d of the 2 statements granting its use", seen)
	}
	for _, f := range Functions(catalog.Default()) {
		env := props(p.resource(t, f.LogicalID))["Environment"].(map[string]any)["Variables"].(map[string]any)
		if _, ok := env[config.EnvConnectorKey]; ok != f.Connects {
			t.Errorf("%s has %s: %v; it connects: %v", f.Path, config.EnvConnectorKey, ok, f.Connects)
		}
	}
}

// TestTheConnectorKeyRingIsAGeneratedSecretThatSeals checks the secret of
// ConnectorKeyMode secret: a generated key ring that seal/localkey accepts
// (wantToolFunction checks that the connector functions alone read it).
func TestTheConnectorKeyRingIsAGeneratedSecretThatSeals(t *testing.T) {
	p := readTemplate(t)
	secret, err := p.typed.GetSecretsManagerSecretWithName(ConnectorKeysLogicalID)
	if err != nil {
		t.Fatalf("goformation does not see the secret: %v", err)
	}
	g := secret.GenerateSecretString
	if g == nil || g.SecretStringTemplate == nil || g.GenerateStringKey == nil || g.PasswordLength == nil || g.ExcludePunctuation == nil || !*g.ExcludePunctuation {
		t.Fatalf("GenerateSecretString = %+v, want a key ring of letters and digits", g)
	}
	ring := strings.Replace(*g.SecretStringTemplate, "{}", `{"`+*g.GenerateStringKey+`":"`+strings.Repeat("a", *g.PasswordLength)+`"}`, 1)
	keys, err := keyfile.Parse(ring)
	if err == nil {
		_, err = localkey.New(keys)
	}
	if err != nil {
		t.Errorf("a generated key ring %s would not seal: %v", ring, err)
	}
}

// TestEachScheduledTriggerHasAScheduleWhoseRoleInvokesItAlone checks the
// schedules: EventBridge Scheduler invokes each scheduled trigger at its
// catalog rate, sending {}, without retries, as a role that schedules of
// this account alone may assume and that may invoke that one function.
func TestEachScheduledTriggerHasAScheduleWhoseRoleInvokesItAlone(t *testing.T) {
	p := readTemplate(t)
	schedules := 0
	for id, r := range p.raw["Resources"].(map[string]any) {
		if r.(map[string]any)["Type"] == "AWS::Scheduler::Schedule" {
			schedules++
			if !strings.HasSuffix(id, "Schedule") {
				t.Errorf("schedule %s is not named for its function", id)
			}
		}
	}
	var scheduled []string
	for _, f := range Functions(catalog.Default()) {
		if f.Trigger == nil || f.Trigger.Schedule == "" {
			continue
		}
		scheduled = append(scheduled, f.Path)
		id := ScheduleLogicalID(f.LogicalID)
		want := map[string]any{
			"ScheduleExpression": f.Trigger.Schedule,
			"FlexibleTimeWindow": map[string]any{"Mode": "OFF"},
			"State":              "ENABLED",
			"Target": map[string]any{
				"Arn": getAtt(f.LogicalID + ".Arn"), "RoleArn": getAtt(id + "Role.Arn"), "Input": "{}",
				"RetryPolicy": map[string]any{"MaximumRetryAttempts": float64(0), "MaximumEventAgeInSeconds": float64(60)},
			},
		}
		if diff := cmp.Diff(want, only(props(p.resource(t, id)), want)); diff != "" {
			t.Errorf("%s mismatch (-want +got):\n%s", id, diff)
		}
		role := props(p.resource(t, id+"Role"))
		wantRole := map[string]any{
			"AssumeRolePolicyDocument": map[string]any{"Version": "2012-10-17", "Statement": []any{map[string]any{
				"Effect": "Allow", "Principal": map[string]any{"Service": "scheduler.amazonaws.com"}, "Action": "sts:AssumeRole",
				"Condition": map[string]any{"StringEquals": map[string]any{"aws:SourceAccount": ref("AWS::AccountId")}},
			}}},
			"Policies": []any{map[string]any{"PolicyName": "invoke-function", "PolicyDocument": map[string]any{"Version": "2012-10-17",
				"Statement": []any{map[string]any{"Sid": "InvokeScheduledFunction", "Effect": "Allow", "Action": "lambda:InvokeFunction",
					"Resource": getAtt(f.LogicalID + ".Arn")}}}}},
		}
		if diff := cmp.Diff(wantRole, only(role, wantRole)); diff != "" {
			t.Errorf("%sRole mismatch (-want +got):\n%s", id, diff)
		}
		if extra := slices.DeleteFunc(slices.Collect(maps.Keys(role)), func(k string) bool { return wantRole[k] != nil || k == "Description" }); len(extra) > 0 {
			t.Errorf("%sRole has %v beside its trust and its one policy", id, extra)
		}
	}
	if !slices.Contains(scheduled, "connectors/scheduled_sync") || schedules != len(scheduled) {
		t.Errorf("scheduled triggers %v, %d schedules in the template; want the connectors' scheduled sync, one schedule each", scheduled, schedules)
	}
}

func TestOutputsGiveTheMcpUrlAndTheStores(t *testing.T) {
	p := readTemplate(t)
	outputs := p.raw["Outputs"].(map[string]any)
	want := map[string]any{
		"McpUrl": ifv("HasDomain", sub("https://${DomainName}/mcp"),
			ifv("FrontDoorIsRest", sub("https://${RestApi}.execute-api.${AWS::Region}.${AWS::URLSuffix}/"+RestStage+"/mcp"),
				sub("https://${HttpApi}.execute-api.${AWS::Region}.${AWS::URLSuffix}/mcp"))),
		"DomainTarget":     ifv("FrontDoorIsRest", getAtt("RestApiDomain.RegionalDomainName"), getAtt("HttpApiDomain.RegionalDomainName")),
		"TableName":        ref("Table"),
		"BucketName":       ref("Bucket"),
		"RequestStateKeys": ifv(KeyStoreIsSSM, sub(ParameterName(RequestStateKeysLeaf)), ref(RequestStateKeysLogicalID)),
		"Dashboard":        sub("https://${AWS::Region}.console.aws.amazon.com/cloudwatch/home?region=${AWS::Region}#dashboards:name=${" + DashboardLogicalID + "}"),
		"UserPoolId":       ref(UserPoolLogicalID),
		"CreateApiKey":     sub("AWS_REGION=${AWS::Region} go run ./scripts/apikey create --table ${Table} --tenant TENANT --principal WHO"),
	}
	got := map[string]any{}
	for name, o := range outputs {
		got[name] = o.(map[string]any)["Value"]
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outputs mismatch (-want +got):\n%s", diff)
	}
}

// TestParametersRefuseWhatTheGatewayWouldRefuse checks that the parameters'
// patterns agree with config.Validate, so a bad value fails the deploy
// rather than the gateway's cold start.
func TestParametersRefuseWhatTheGatewayWouldRefuse(t *testing.T) {
	p := readTemplate(t)
	params := p.raw["Parameters"].(map[string]any)
	pattern := func(name string) *regexp.Regexp {
		return regexp.MustCompile(params[name].(map[string]any)["AllowedPattern"].(string))
	}
	tests := []struct {
		param, value string
		env          string
	}{
		{"AllowedOrigins", "", config.EnvAllowedOrigins},
		{"AllowedOrigins", "https://app.example.com", config.EnvAllowedOrigins},
		{"AllowedOrigins", "https://app.example.com,http://localhost:3000", config.EnvAllowedOrigins},
		{"AllowedOrigins", "app.example.com", config.EnvAllowedOrigins},
		{"AllowedOrigins", "ftp://app.example.com", config.EnvAllowedOrigins},
		{"RateLimits", "", config.EnvRateLimits},
		{"RateLimits", "off", config.EnvRateLimits},
		{"RateLimits", "tenant_rate=50 tenant_burst=100 principal_rate=600/min share.rag/basic=3", config.EnvRateLimits},
		{"AnonymousTenant", "", config.EnvAnonymousTenant},
		{"AnonymousTenant", "demo", config.EnvAnonymousTenant},
		{"AnonymousTenant", "Demo", config.EnvAnonymousTenant},
		{"AnonymousTenant", "-demo", config.EnvAnonymousTenant},
	}
	for _, tc := range tests {
		t.Run(tc.param+"="+tc.value, func(t *testing.T) {
			cfg := config.FromEnv(func(k string) string {
				switch k {
				case tc.env:
					return tc.value
				case config.EnvTable:
					return "switchboard"
				}
				return ""
			})
			valid := cfg.Validate() == nil
			if got := pattern(tc.param).MatchString(tc.value); got != valid {
				t.Errorf("the template's pattern accepts %q: %v; config.Validate accepts it: %v", tc.value, got, valid)
			}
		})
	}
}

func TestFunctionsWhoseNamesWouldCollideAreRefused(t *testing.T) {
	tool := func(name, function string) *catalog.Tool {
		return &catalog.Tool{
			Name: name, Title: name, Description: "A test tool.", Family: "test", Function: function,
			InputSchema: objectSchema, OutputSchema: objectSchema,
			Visibility: catalog.Public, Limits: catalog.Limits{Timeout: time.Second, MemoryMB: 128},
		}
	}
	cat, err := catalog.New([]*catalog.Tool{tool("a", "test/get_item"), tool("b", "test/get-item")}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Template(cat); err == nil || !strings.Contains(err.Error(), "would both have") {
		t.Errorf("Template of test/get_item and test/get-item: err = %v, want a collision error", err)
	}
}

func cmpOr(s, otherwise string) string {
	if s == "" {
		return otherwise
	}
	return s
}

// TestFunctionNamesLeaveRoomForTheStackName checks that every deployed
// function name fits Lambda's 64 characters under a stack name of up to 32.
func TestFunctionNamesLeaveRoomForTheStackName(t *testing.T) {
	const lambdaMax, stackRoom = 64, 32
	for _, f := range Functions(catalog.Default()) {
		if n := stackRoom + len("-") + len(f.Name); n > lambdaMax {
			t.Errorf("%s deploys as <stack>-%s: %d characters with a %d-character stack name, over Lambda's %d",
				f.Path, f.Name, n, stackRoom, lambdaMax)
		}
	}
}

// invokeTargets is what the gateway may invoke: every catalog function that
// serves a public tool, a resource or a tool the gateway itself calls (the
// connectors' proxy), by its exact name, and nothing else (not itself, not a
// trigger, not an internal step such as the pipeline's or the search
// workers, not another stack's).
func invokeTargets() []any {
	cat := catalog.Default()
	public := map[string]bool{}
	for _, t := range cat.Tools() {
		if t.Visibility == catalog.Public || t.GatewayCalls {
			public[t.Function] = true
		}
	}
	for _, r := range cat.Resources() {
		public[r.Function] = true
	}
	var out []any
	for _, f := range Functions(cat) {
		if public[f.Path] {
			out = append(out, sub("arn:${AWS::Partition}:lambda:${AWS::Region}:${AWS::AccountId}:function:${AWS::StackName}-"+f.Name))
		}
	}
	return out
}

// TestTheGatewayCannotInvokeInternalFunctions: the functions of internal
// tools alone (pipeline steps, search workers) and triggers are not among
// what the gateway may invoke.
func TestTheGatewayCannotInvokeInternalFunctions(t *testing.T) {
	cat := catalog.Default()
	internal := 0
	targets := jsonText(t, props(readTemplate(t).resource(t, invoke.LogicalID(GatewayPath)))["Policies"])
	for _, f := range cat.Functions() {
		if f.Public {
			continue
		}
		internal++
		if strings.Contains(targets, "${AWS::StackName}-"+invoke.FunctionName(f.Path)+`"`) {
			t.Errorf("the gateway may invoke %s, which serves no public tool or resource", f.Path)
		}
	}
	if internal == 0 {
		t.Fatal("the catalog has no internal function to check")
	}
}

// TestTheGatewayMayInvokeTheEmbedFunctionForToolSearch: vector_embed_texts
// is internal, yet the gateway may invoke its function (tool_search embeds
// through it) and is told which embedder the stack has; no host lists it.
func TestTheGatewayMayInvokeTheEmbedFunctionForToolSearch(t *testing.T) {
	tool, ok := catalog.Default().Tool(catalog.EmbedTextsTool)
	if !ok || tool.Visibility != catalog.Internal || !tool.GatewayCalls {
		t.Fatalf("%s: %+v, want an internal tool the gateway calls", catalog.EmbedTextsTool, tool)
	}
	gw := props(readTemplate(t).resource(t, invoke.LogicalID(GatewayPath)))
	if policies := jsonText(t, gw["Policies"]); !strings.Contains(policies, "${AWS::StackName}-"+invoke.FunctionName(tool.Function)+`"`) {
		t.Errorf("the gateway may not invoke %s: %s", tool.Function, policies)
	}
	if env := jsonText(t, gw["Environment"]); !strings.Contains(env, `"`+config.EnvEmbedder+`":{"Ref":"Embedder"}`) {
		t.Errorf("the gateway's environment lacks %s: %s", config.EnvEmbedder, env)
	}
}

func jsonText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// IAM refuses a policy document without statements (MalformedPolicyDocument),
// so no choice of parameters may leave one empty.
func TestNoPolicyIsEmptyUnderAnyParameters(t *testing.T) {
	p := readTemplate(t)
	for _, id := range p.serverlessFunctions() {
		policies, ok := props(p.resource(t, id))["Policies"].([]any)
		if !ok {
			continue
		}
		// Only the conditions the policies name change them: trying those
		// alone keeps 2^n small as the template gains conditions.
		conds := slices.Sorted(maps.Keys(conditionsIn(policies)))
		for mask := range 1 << len(conds) {
			truth := map[string]bool{}
			for i, c := range conds {
				truth[c] = mask&(1<<i) != 0
			}
			for i, doc := range resolveIf(policies, truth).([]any) {
				statements, _ := doc.(map[string]any)["Statement"].([]any)
				if len(statements) == 0 {
					t.Fatalf("%s: with conditions %v, policy %d has no statements: %v", id, truth, i, doc)
				}
			}
		}
	}
}

// conditionsIn returns the conditions the Fn::If functions in v name.
func conditionsIn(v any) map[string]bool {
	out := map[string]bool{}
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if args, ok := v["Fn::If"].([]any); ok && len(args) == 3 {
				out[args[0].(string)] = true
			}
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

// resolveIf evaluates the Fn::If functions in v with the conditions' truth,
// dropping the items that resolve to AWS::NoValue, as CloudFormation does.
func resolveIf(v any, truth map[string]bool) any {
	switch v := v.(type) {
	case map[string]any:
		if args, ok := v["Fn::If"].([]any); ok && len(v) == 1 && len(args) == 3 {
			if truth[args[0].(string)] {
				return resolveIf(args[1], truth)
			}
			return resolveIf(args[2], truth)
		}
		out := map[string]any{}
		for k, e := range v {
			out[k] = resolveIf(e, truth)
		}
		return out
	case []any:
		out := []any{}
		for _, e := range v {
			if e = resolveIf(e, truth); !reflect.DeepEqual(e, noValue) {
				out = append(out, e)
			}
		}
		return out
	}
	return v
}

// TestTheTenantRoleHoldsTenantcredsDocuments: with TenantIsolation on, the
// role the tool functions assume has tenantcreds' identity policy, boundary
// and trust, with the template's ARNs, and !Sub leaves the session tag's
// policy variable to IAM.
func TestTheTenantRoleHoldsTenantcredsDocuments(t *testing.T) {
	p := readTemplate(t)
	r := tenantcreds.Resources{TableARN: tenantTableARN, BucketARN: tenantBucketARN}
	keyed := r
	keyed.KeyARN = "${KmsKeyArn}"
	unescape := func(v any) string {
		s, _ := v.(string)
		return strings.ReplaceAll(s, "${!aws:", "${aws:")
	}
	subList := func(v any) string { // !Sub [text, {Id: ...}]
		args, _ := v.(map[string]any)["Fn::Sub"].([]any)
		if len(args) != 2 {
			t.Fatalf("want !Sub [document, {Id: the stack's id}], got %v", v)
		}
		return unescape(args[0])
	}
	// With KmsKeyArn the documents grant the bucket's key through S3.
	eitherSub := func(v any) (withKey, without string) { // !If [HasKmsKey, !Sub [...], !Sub [...]]
		args, _ := v.(map[string]any)["Fn::If"].([]any)
		if len(args) != 3 || args[0] != HasKmsKey {
			t.Fatalf("want !If [%s, the document with the key, without], got %v", HasKmsKey, v)
		}
		return subList(args[1]), subList(args[2])
	}
	role, boundary := p.resource(t, TenantRoleLogicalID), p.resource(t, "TenantBoundary")
	for id, res := range map[string]map[string]any{TenantRoleLogicalID: role, "TenantBoundary": boundary} {
		if res["Condition"] != TenantIsolationOn {
			t.Errorf("%s exists under %v, want %s", id, res["Condition"], TenantIsolationOn)
		}
	}
	rp := props(role)
	if got, want := unescape(rp["AssumeRolePolicyDocument"].(map[string]any)["Fn::Sub"]), tenantcreds.TrustPolicy("arn:${AWS::Partition}:iam::${AWS::AccountId}:root",
		[]string{"arn:${AWS::Partition}:iam::${AWS::AccountId}:role/*"}).JSON(); got != want {
		t.Errorf("trust policy\n got %s\nwant %s", got, want)
	}
	policies := rp["Policies"].([]any)
	roleKeyed, roleDoc := eitherSub(policies[0].(map[string]any)["PolicyDocument"])
	boundaryKeyed, boundaryDoc := eitherSub(props(boundary)["PolicyDocument"])
	for _, c := range []struct{ name, got, want string }{
		{"identity policy", roleDoc, tenantcreds.RolePolicy(r, connector.SyncIndexPartition).JSON()},
		{"identity policy with the key", roleKeyed, tenantcreds.RolePolicy(keyed, connector.SyncIndexPartition).JSON()},
		{"boundary", boundaryDoc, tenantcreds.Boundary(r, connector.SyncIndexPartition).JSON()},
		{"boundary with the key", boundaryKeyed, tenantcreds.Boundary(keyed, connector.SyncIndexPartition).JSON()},
	} {
		if len(policies) != 1 || c.got != c.want {
			t.Errorf("%s\n got %s\nwant %s", c.name, c.got, c.want)
		}
	}
	if diff := cmp.Diff(ref("TenantBoundary"), rp["PermissionsBoundary"]); diff != "" {
		t.Errorf("permissions boundary (-want +got):\n%s", diff)
	}
	// Every variable left to IAM is the session's tenant tag; every other
	// ${...} is one !Sub resolves.
	for _, doc := range []string{roleDoc, roleKeyed, boundaryDoc, boundaryKeyed} {
		for _, v := range regexp.MustCompile(`\$\{[^}]*\}`).FindAllString(doc, -1) {
			if !slices.Contains([]string{"${aws:PrincipalTag/tenant}", "${AWS::Partition}", "${AWS::Region}", "${AWS::AccountId}", "${Table}", "${Id}", "${KmsKeyArn}"}, v) {
				t.Errorf("unexpected variable %s in %s", v, doc)
			}
		}
	}
}

// TestWithoutAnExternalIssuerTheStackHasCognito checks OAuth's default
// identity provider: with OAuthResource set and no OAuthIssuer, a Cognito
// user pool whose users cannot write their own tenant, its domain, the
// facade's public app client (authorization code, openid and email, the one
// callback on OAuthResource's host) and the generated secret of the facade's
// signing keys, which only the gateway may read.
func TestWithoutAnExternalIssuerTheStackHasCognito(t *testing.T) {
	p := readTemplate(t)
	want := map[string]any{"Fn::And": []any{
		map[string]any{"Fn::Not": []any{map[string]any{"Fn::Equals": []any{ref("OAuthResource"), ""}}}},
		map[string]any{"Fn::Equals": []any{ref("OAuthIssuer"), ""}},
	}}
	if diff := cmp.Diff(want, p.raw["Conditions"].(map[string]any)[UseCognito]); diff != "" {
		t.Errorf("condition %s mismatch (-want +got):\n%s", UseCognito, diff)
	}
	for _, id := range []string{UserPoolLogicalID, "UserPoolDomain", UserPoolClientLogicalID, OAuthSigningKeysLogicalID} {
		if c := p.resource(t, id)["Condition"]; c != UseCognito {
			t.Errorf("%s has condition %v, want %s", id, c, UseCognito)
		}
	}
	pool := props(p.resource(t, UserPoolLogicalID))
	if pool["AdminCreateUserConfig"].(map[string]any)["AllowAdminCreateUserOnly"] != true {
		t.Errorf("the user pool lets anyone sign up: %v", pool["AdminCreateUserConfig"])
	}
	if !strings.Contains(jsonText(t, pool["Schema"]), `"Name":"tenant"`) {
		t.Errorf("the user pool has no tenant attribute: %v", pool["Schema"])
	}
	domain := props(p.resource(t, "UserPoolDomain"))
	if diff := cmp.Diff(ref(UserPoolLogicalID), domain["UserPoolId"]); diff != "" {
		t.Errorf("the domain's pool mismatch (-want +got):\n%s", diff)
	}

	client := props(p.resource(t, UserPoolClientLogicalID))
	wantClient := map[string]any{
		"UserPoolId": ref(UserPoolLogicalID), "GenerateSecret": false, "AllowedOAuthFlowsUserPoolClient": true,
		"AllowedOAuthFlows": strs("code"), "AllowedOAuthScopes": strs("openid", "email"), "SupportedIdentityProviders": strs("COGNITO"),
		"CallbackURLs": []any{map[string]any{"Fn::Sub": []any{"https://${Host}" + oauth.PathCallback,
			map[string]any{"Host": map[string]any{"Fn::Select": []any{2.0, map[string]any{"Fn::Split": []any{"/", ref("OAuthResource")}}}}}}}},
		"WriteAttributes": strs("email"),
	}
	if diff := cmp.Diff(wantClient, only(client, wantClient)); diff != "" {
		t.Errorf("app client mismatch (-want +got):\n%s", diff)
	}
	if !slices.Contains(client["ReadAttributes"].([]any), any(CognitoTenantClaim)) {
		t.Errorf("the app client cannot read %s: %v", CognitoTenantClaim, client["ReadAttributes"])
	}
	// The callback's host, !Select [2, !Split ["/", OAuthResource]], is the
	// facade's issuer's host (authz: the resource's origin) for every value
	// the parameter accepts.
	pattern := regexp.MustCompile(p.raw["Parameters"].(map[string]any)["OAuthResource"].(map[string]any)["AllowedPattern"].(string))
	for _, r := range []string{"https://abc.execute-api.eu-west-1.amazonaws.com/mcp", "https://mcp.example.com:8443/v1/mcp", "https://x.example.com/mcp/mcp"} {
		if !pattern.MatchString(r) {
			t.Errorf("OAuthResource refuses %s", r)
			continue
		}
		u, _ := url.Parse(r)
		if host := strings.Split(r, "/")[2]; host != u.Host {
			t.Errorf("the callback of %s would be on %s, not %s", r, host, u.Host)
		}
	}
	for _, r := range []string{"https://a.example.com", "http://a.example.com/mcp", "https://a.example.com/mcpx"} {
		if pattern.MatchString(r) {
			t.Errorf("OAuthResource accepts %s", r)
		}
	}

	secret, err := p.typed.GetSecretsManagerSecretWithName(OAuthSigningKeysLogicalID)
	if err != nil {
		t.Fatal(err)
	}
	g := secret.GenerateSecretString
	if g == nil || deref(g.SecretStringTemplate) != "{}" || deref(g.GenerateStringKey) != "fk1" || deref(g.PasswordLength) < oauth.MinSeedBytes {
		t.Fatalf("GenerateSecretString = %+v, want {} with fk1: at least %d characters", g, oauth.MinSeedBytes)
	}
	if _, err := oauth.DeriveSigningKey("fk1", []byte(strings.Repeat("a", deref(g.PasswordLength)))); err != nil {
		t.Errorf("a generated seed gives no key: %v", err)
	}
	for _, f := range Functions(catalog.Default()) {
		mentions := strings.Contains(jsonText(t, p.resource(t, f.LogicalID)), OAuthSigningKeysLogicalID)
		if mentions != (f.Path == GatewayPath) {
			t.Errorf("%s names the signing keys' secret: %v; only the gateway should", f.Path, mentions)
		}
	}
	rule := jsonText(t, p.raw["Rules"].(map[string]any)["OAuthIssuerNeedsResource"])
	if !strings.Contains(rule, `"RuleCondition":{"Fn::Not":[{"Fn::Equals":[{"Ref":"OAuthIssuer"},""]}]}`) || !strings.Contains(rule, `"Assert":{"Fn::Not":[{"Fn::Equals":[{"Ref":"OAuthResource"},""]}]}`) {
		t.Errorf("rule OAuthIssuerNeedsResource = %s, want OAuthIssuer to need OAuthResource", rule)
	}
}

// TestKmsKeyArnEncryptsEverythingTheStackKeeps: with the KmsKeyArn parameter
// set (condition HasKmsKey), the table, the bucket, every log group and every
// secret use that key; without it, AWS-managed keys. The roles that decrypt
// with it get it: readers of the bucket and of secrets.
func TestKmsKeyArnEncryptsEverythingTheStackKeeps(t *testing.T) {
	p := readTemplate(t)
	key := ifv(HasKmsKey, ref("KmsKeyArn"), noValue)
	if diff := cmp.Diff(map[string]any{"Fn::Not": []any{map[string]any{"Fn::Equals": []any{ref("KmsKeyArn"), ""}}}}, p.raw["Conditions"].(map[string]any)[HasKmsKey]); diff != "" {
		t.Errorf("condition %s mismatch (-want +got):\n%s", HasKmsKey, diff)
	}
	logs, secrets, rings := 0, 0, 0
	for id, r := range p.raw["Resources"].(map[string]any) {
		res := r.(map[string]any)
		switch res["Type"] {
		case "AWS::Logs::LogGroup":
			logs++
			if diff := cmp.Diff(key, props(res)["KmsKeyId"]); diff != "" {
				t.Errorf("log group %s: KmsKeyId mismatch (-want +got):\n%s", id, diff)
			}
		case "AWS::SecretsManager::Secret":
			if res["Condition"] == UseConnectorKeySecret {
				continue // with the key, the connectors' key ring is not made
			}
			secrets++
			if diff := cmp.Diff(key, props(res)["KmsKeyId"]); diff != "" {
				t.Errorf("secret %s: KmsKeyId mismatch (-want +got):\n%s", id, diff)
			}
		case keyring.ResourceType:
			if res["Condition"] == UseConnectorKeyParameter {
				continue // likewise
			}
			rings++
			if diff := cmp.Diff(key, props(res)["KeyId"]); diff != "" {
				t.Errorf("key ring %s: KeyId mismatch (-want +got):\n%s", id, diff)
			}
		}
	}
	if rings != 1 {
		t.Errorf("%d key ring parameters the key encrypts; want the request-state keys'", rings)
	}
	if logs < len(Functions(catalog.Default())) || secrets < 3 {
		t.Errorf("%d log groups and %d secrets; want every function's log group and the three secrets", logs, secrets)
	}
	param := p.raw["Parameters"].(map[string]any)["KmsKeyArn"].(map[string]any)
	pattern := regexp.MustCompile(param["AllowedPattern"].(string))
	for v, ok := range map[string]bool{"": true, "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab": true,
		"alias/switchboard": false, "arn:aws:kms:eu-west-1:123456789012:alias/switchboard": false} {
		if pattern.MatchString(v) != ok {
			t.Errorf("KmsKeyArn accepts %q: %v, want %v", v, !ok, ok)
		}
	}
	// Tenant isolation and the key go together: the tenant role's sessions
	// are granted the bucket's key (TestTheTenantRoleHoldsTenantcredsDocuments).
	if _, ok := p.raw["Rules"].(map[string]any)["KmsKeyWithoutTenantIsolation"]; ok {
		t.Error("a rule still refuses KmsKeyArn with TenantIsolation on")
	}
	cond := p.raw["Conditions"].(map[string]any)[TenantIsolationWithKmsKey]
	if want := map[string]any{"Fn::And": []any{TenantIsolationOn, HasKmsKey}}; !cmp.Equal(cond, want) {
		t.Errorf("condition %s = %v, want %v", TenantIsolationWithKmsKey, cond, want)
	}
}

// TestTheOpenAIKeyReachesFunctionsOnlyAsASecret: the key parameter becomes a
// secret, which only the functions that embed or generate may read, and
// whose ARN alone is in their environment; no function's environment holds
// the parameter itself.
func TestTheOpenAIKeyReachesFunctionsOnlyAsASecret(t *testing.T) {
	p := readTemplate(t)
	secret := p.resource(t, OpenAIApiKeyLogicalID)
	if secret["Condition"] != "HasOpenAIApiKey" || !cmp.Equal(props(secret)["SecretString"], ref("OpenAIApiKey")) {
		t.Errorf("secret %s = %v; want the OpenAIApiKey parameter, only when set", OpenAIApiKeyLogicalID, secret)
	}
	for _, f := range Functions(catalog.Default()) {
		text := jsonText(t, p.resource(t, f.LogicalID))
		if strings.Contains(text, `{"Ref":"OpenAIApiKey"}`) {
			t.Errorf("%s gets the OpenAIApiKey parameter itself", f.Path)
		}
		if reads := strings.Contains(text, `"Sid":"ReadProviderKeys"`); reads != (f.Embeds || f.Generates) {
			t.Errorf("%s may read the provider keys: %v; want %v", f.Path, reads, f.Embeds || f.Generates)
		}
	}
}

// TestTheMultiVectorKeyReachesOnlyLateInteractionAsASecret: the multi-vector
// API's key parameter becomes a secret that only the functions of late
// interaction may read, whose ARN alone is in their environment; at least
// rag_pylate_colbert's function is one.
func TestTheMultiVectorKeyReachesOnlyLateInteractionAsASecret(t *testing.T) {
	p := readTemplate(t)
	secret := p.resource(t, MultiVectorApiKeyLogicalID)
	if secret["Condition"] != "HasMultiVectorApiKey" || !cmp.Equal(props(secret)["SecretString"], ref("MultiVectorApiKey")) {
		t.Errorf("secret %s = %v; want the MultiVectorApiKey parameter, only when set", MultiVectorApiKeyLogicalID, secret)
	}
	readers := 0
	for _, f := range Functions(catalog.Default()) {
		text := jsonText(t, p.resource(t, f.LogicalID))
		if strings.Contains(text, `{"Ref":"MultiVectorApiKey"}`) {
			t.Errorf("%s gets the MultiVectorApiKey parameter itself", f.Path)
		}
		reads := strings.Contains(text, `"Sid":"ReadMultiVectorKey"`)
		if reads != f.MultiVector {
			t.Errorf("%s may read the multi-vector key: %v; want %v", f.Path, reads, f.MultiVector)
		}
		if reads {
			readers++
		}
	}
	if fn, ok := catalog.Default().Function("rag/pylate_colbert"); !ok || !fn.MultiVector || readers == 0 {
		t.Errorf("rag/pylate_colbert marks MultiVector: %v; %d functions read the key", fn.MultiVector, readers)
	}
}

// TestWithKeyStoreSSMTheKeyRingsAreParametersOnlyTheirFunctionKeeps checks
// KeyStore ssm: the key rings are Custom::KeyRing resources served by the
// keyring function, which exists with them alone and may read, write and
// delete exactly their two parameters; the request-state secret exists
// only without it; the readers' grants name the parameters the resources
// make.
func TestWithKeyStoreSSMTheKeyRingsAreParametersOnlyTheirFunctionKeeps(t *testing.T) {
	p := readTemplate(t)
	param := p.raw["Parameters"].(map[string]any)["KeyStore"].(map[string]any)
	if param["Default"] != "secretsmanager" || !cmp.Equal(param["AllowedValues"], []any{"secretsmanager", "ssm"}) {
		t.Errorf("KeyStore: default %v, allowed %v; want secretsmanager of secretsmanager and ssm", param["Default"], param["AllowedValues"])
	}
	fnID := invoke.LogicalID(KeyringPath)
	fn := p.resource(t, fnID)
	if fn["Condition"] != KeyStoreIsSSM || p.resource(t, logGroupID(fnID))["Condition"] != KeyStoreIsSSM {
		t.Errorf("the keyring function and its log group have conditions %v and %v, want %s", fn["Condition"], p.resource(t, logGroupID(fnID))["Condition"], KeyStoreIsSSM)
	}
	arns := []any{sub("arn:${AWS::Partition}:ssm:${AWS::Region}:${AWS::AccountId}:parameter/switchboard/${AWS::StackName}/request-state-keys"),
		sub("arn:${AWS::Partition}:ssm:${AWS::Region}:${AWS::AccountId}:parameter/switchboard/${AWS::StackName}/connector-keys")}
	wantPolicies := []any{
		map[string]any{"Statement": []any{map[string]any{"Sid": "KeepKeyRings", "Effect": "Allow",
			"Action": strs("ssm:GetParameter", "ssm:PutParameter", "ssm:DeleteParameter"), "Resource": arns}}},
		ifv(HasKmsKey, map[string]any{"Statement": []any{map[string]any{"Sid": "UseKmsKey", "Effect": "Allow",
			"Action": strs("kms:Encrypt", "kms:Decrypt"), "Resource": []any{ref("KmsKeyArn")}}}}, noValue),
	}
	if diff := cmp.Diff(wantPolicies, props(fn)["Policies"]); diff != "" {
		t.Errorf("the keyring function's policies mismatch (-want +got):\n%s", diff)
	}
	for _, c := range []struct {
		id, cond string
		arn      any
	}{
		{RequestStateKeysParameterLogicalID, KeyStoreIsSSM, arns[0]},
		{ConnectorKeysParameterLogicalID, UseConnectorKeyParameter, arns[1]},
	} {
		r := p.resource(t, c.id)
		pr := props(r)
		if r["Type"] != keyring.ResourceType || r["Condition"] != c.cond || !cmp.Equal(pr["ServiceToken"], getAtt(fnID+".Arn")) || !cmp.Equal(pr["Rotation"], ref("KeyRotation")) {
			t.Errorf("%s: %v under %v, served by %v, rotated by %v; want %s under %s, by %s, rotated by KeyRotation",
				c.id, r["Type"], r["Condition"], pr["ServiceToken"], pr["Rotation"], keyring.ResourceType, c.cond, fnID)
		}
		// The name the resource makes is the one the grants name.
		name, _ := pr["Name"].(map[string]any)["Fn::Sub"].(string)
		if want := c.arn.(map[string]any)["Fn::Sub"]; "arn:${AWS::Partition}:ssm:${AWS::Region}:${AWS::AccountId}:parameter"+name != want {
			t.Errorf("%s makes %s, but the grants name %s", c.id, name, want)
		}
	}
	if r := p.resource(t, RequestStateKeysLogicalID); r["Condition"] != KeyStoreIsSecretsManager {
		t.Errorf("the request-state secret has condition %v, want %s", r["Condition"], KeyStoreIsSecretsManager)
	}
}

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
// catalog entry says it needs; the RAG pipeline's state machine (Express,
// infra/statemachines/rag_pipeline.asl.json, allowed to invoke exactly its
// three step functions, and started only by the functions of tools marked
// Pipeline); the S3 events of triggers; Bedrock only for functions that embed
// or generate.
package deploy

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strings"
	"text/template"
	"time"

	"github.com/switchboard-dev/switchboard/infra"
	"github.com/switchboard-dev/switchboard/shared/apikey"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/connector"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/keyring"
	"github.com/switchboard-dev/switchboard/shared/metrics"
	"github.com/switchboard-dev/switchboard/shared/oauth"
	"github.com/switchboard-dev/switchboard/shared/provider/bedrock"
	"github.com/switchboard-dev/switchboard/shared/quota"
	"github.com/switchboard-dev/switchboard/shared/ratelimit"
	"github.com/switchboard-dev/switchboard/shared/statemachine"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
	"github.com/switchboard-dev/switchboard/shared/tenantcreds"
)

// GatewayPath is the gateway's folder under functions/.
const GatewayPath = "gateway"

// GatewayLimits are the gateway function's limits. The timeout stays under
// the HTTP API's 30-second integration limit, so the function, not API
// Gateway, decides what a slow call returns; behind the streaming REST API
// it is [StreamingGatewayTimeout] instead. The memory is generous because
// Lambda allots CPU in proportion to it, and the gateway's cold start (building
// the MCP server from the catalog) is CPU-bound.
var GatewayLimits = catalog.Limits{Timeout: 29 * time.Second, MemoryMB: 1024}

// A Route is one HTTP API route to the gateway.
type Route struct {
	// ID names the route's event in the template.
	ID, Method, Path string
}

// Routes are the gateway's routes, on either front door: MCP, the memory server seed's
// compatibility endpoints, the RFC 9728 protected-resource metadata and the
// approval page of connector calls (GET shows it, POST decides), and the
// OpenAI-compatible chat endpoint (streamed by the REST API front door).
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
	{"AuthorizationServerMetadata", "GET", "/.well-known/oauth-authorization-server"},
	{"OAuth", "ANY", "/oauth/{proxy+}"},
	{"Approval", "ANY", "/approvals/{id}"},
	{"ChatCompletions", "POST", "/v1/chat/completions"},
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
	// BlobKeys and Invokes are the catalog's, see [catalog.Function].
	BlobKeys, Invokes []string
	// Serves names the tools and resources it serves; empty for the gateway
	// and for triggers.
	Serves []string
	// Pipeline, Embeds, Generates, StreamsReply, MultiVector, Connects,
	// Searches, Seals, Opens, Deletes, Public, Progress and Trigger are the
	// catalog's, see [catalog.Function].
	Pipeline, Embeds, Generates, StreamsReply, MultiVector, Connects bool
	Progress                                                         bool
	Seals, Opens, Deletes, Public                                    bool
	Searches                                                         bool
	Trigger                                                          *catalog.Trigger
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
			Limits: f.Limits, Table: f.Table, Blobs: f.Blobs, BlobKeys: f.BlobKeys, Invokes: f.Invokes,
			Serves:   append(append([]string(nil), f.Tools...), f.Resources...),
			Pipeline: f.Pipeline, Embeds: f.Embeds, Generates: f.Generates, StreamsReply: f.StreamsReply, MultiVector: f.MultiVector, Connects: f.Connects, Searches: f.Searches, Trigger: f.Trigger,
			Seals: f.Seals, Opens: f.Opens, Deletes: f.Deletes, Public: f.Public, Progress: f.Progress,
		})
	}
	return out
}

// The IAM actions each level of access grants. TransactWriteItems has no
// action of its own: each item in a transaction is authorised by PutItem,
// DeleteItem or ConditionCheckItem, so read-write grants PutItem and
// ConditionCheckItem, and DeleteItem too for a function whose catalog entry
// deletes.
var (
	tableRead        = []string{"dynamodb:GetItem", "dynamodb:Query"}
	tablePut         = []string{"dynamodb:PutItem"}
	tableWrite       = []string{"dynamodb:PutItem", "dynamodb:ConditionCheckItem"}
	tableDelete      = []string{"dynamodb:DeleteItem"}
	bucketObjectRead = []string{"s3:GetObject"}
	bucketObjectRW   = []string{"s3:PutObject", "s3:DeleteObject"}
)

type envVar struct{ Name, Value string }

type statement struct {
	Sid         string
	Actions     []string
	Resources   []string
	LeadingKeys []string
	// LeadingKeyPatterns, if set, are the partition key patterns (StringLike:
	// * and ? match) the statement's actions are limited to.
	LeadingKeyPatterns []string
	// EncryptionContext, if set, limits the statement's KMS actions to it.
	EncryptionContext *kmsContext
	// Condition, if set, names the template condition under which the
	// statement exists (Fn::If with AWS::NoValue otherwise).
	Condition string
}

type templateFunction struct {
	LogicalID, LogGroupID, Name, Comment, Description string
	// Condition, if set, names the template condition under which the
	// function and its log group exist.
	Condition string
	// Timeout is in seconds, or the template's choice between two.
	Timeout            string
	MemoryMB, Reserved int
	Env                []envVar
	Statements         []statement
	S3                 *catalog.S3Events
	Schedule           *templateSchedule
	// FailureQueue, for a function S3 invokes, is the logical ID of the
	// queue its failed events go to.
	FailureQueue string
}

// templateSchedule is the EventBridge Scheduler schedule that invokes a
// trigger, with the role it invokes the function as: allowed to invoke that
// function alone.
type templateSchedule struct {
	LogicalID, RoleLogicalID, Function, Expression string
}

// ScheduleLogicalID returns the logical ID of the schedule that invokes
// the function whose logical ID is id; its role's is this with Role after it.
func ScheduleLogicalID(id string) string { return strings.TrimSuffix(id, "Function") + "Schedule" }

type templateData struct {
	Functions []templateFunction
	Pipeline  *templatePipeline
	// ConnectorKey is what seals connector credentials without KmsKeyArn
	// (the key of the stack's own or the key ring's secret), nil when no
	// function connects.
	ConnectorKey *templateConnectorKey
	// KeyRing names what the Custom::KeyRing resources use (KeyStore ssm).
	KeyRing                       *templateKeyRing
	PK, SK, ExpiresAt             string
	OriginsPattern, TenantPattern string
	DefaultRetention              int
	RetentionValues               []string
	BucketName                    string
	// The tenant role's documents (tenantRoleDocuments) and the stack's id
	// for the bucket's name in them.
	TenantRolePolicy, TenantBoundary, TenantTrust, StackUUID string
	FrontDoor                                                templateFrontDoor
	// What watches the stack (observability.go): the access log's format,
	// the dashboard's body, the alarms, the failure queues.
	AccessLogGroupID, AccessLogFormat string
	DashboardID, Dashboard            string
	Namespace, FamilyDimension        string
	AlarmPeriod                       int
	Alarms                            []templateAlarm
	FailureQueues                     []templateFailureQueue
	// The facade's callback path and the Cognito tenant claim.
	OAuthCallbackPath, CognitoTenantClaim string
}

// The RAG pipeline's state machine in the template.
const (
	// PipelineLogicalID is the state machine's logical ID; Ref gives its ARN.
	PipelineLogicalID = "RagPipeline"
	// PipelineName is its name after "<stack>-".
	PipelineName       = "rag-pipeline"
	pipelineLogGroupID = "RagPipelineLogGroup"
)

// Without KmsKeyArn, parameter ConnectorKeyMode chooses what seals connector
// credentials: "kms" (the default, condition UseConnectorKey) the stack's own
// KMS key ConnectorKeyLogicalID, whose policy alone grants the connector
// functions its use; "secret" a key ring, read at start, kept where KeyStore
// says: the Secrets Manager secret
// ConnectorKeysLogicalID (UseConnectorKeySecret), or the SSM parameter of
// the Custom::KeyRing ConnectorKeysParameterLogicalID
// (UseConnectorKeyParameter). With KmsKeyArn (HasKmsKey), that key seals
// them and none is created.
const (
	ConnectorKeyLogicalID           = "ConnectorKey"
	ConnectorKeysLogicalID          = "ConnectorKeys"
	ConnectorKeysParameterLogicalID = "ConnectorKeysParameter"
	UseConnectorKey                 = "UseConnectorKey"
	UseConnectorKeySecret           = "UseConnectorKeySecret"
	UseConnectorKeyParameter        = "UseConnectorKeyParameter"
)

// connectorKey is the value of SWITCHBOARD_CONNECTOR_KEY: the ARN of the key,
// of the key ring's secret, or of its parameter with the version (ARN#VERSION,
// so that a rotation starts fresh instances) that the conditions above create.
const connectorKey = `!If [` + HasKmsKey + `, !Ref KmsKeyArn, !If [` + UseConnectorKey + `, !GetAtt ` + ConnectorKeyLogicalID +
	`.Arn, !If [` + KeyStoreIsSSM + `, !GetAtt ` + ConnectorKeysParameterLogicalID + `.` + keyring.AttrReference + `, !Ref ` + ConnectorKeysLogicalID + `]]]`

// Parameter KeyStore chooses where the key rings the stack generates (the
// gateway's request-state keys; the connectors' ring with ConnectorKeyMode
// secret) are kept: "secretsmanager" (the default) Secrets Manager secrets,
// $0.40 a month each; "ssm" (condition KeyStoreIsSSM) SecureString
// parameters of SSM Parameter Store's standard tier, free, which the
// function KeyringPath creates, rotates and deletes as Custom::KeyRing
// resources (package keyring), since CloudFormation cannot create
// SecureString parameters.
const (
	KeyStoreIsSSM            = "KeyStoreIsSSM"
	KeyStoreIsSecretsManager = "KeyStoreIsSecretsManager"
	// KeyringPath is the custom resources' function's folder under functions/.
	KeyringPath = "keyring"
	// RequestStateKeysParameterLogicalID is the Custom::KeyRing of the
	// gateway's request-state keys with KeyStore ssm.
	RequestStateKeysParameterLogicalID = "RequestStateKeysParameter"
)

// parameterArn returns the ARN of the stack's SSM parameter whose name is
// /switchboard/<stack>/<leaf>, as a !Sub expression.
func parameterArn(leaf string) string {
	return "!Sub arn:${AWS::Partition}:ssm:${AWS::Region}:${AWS::AccountId}:parameter" + ParameterName(leaf)
}

// ParameterName is the name of the stack's SSM parameter leaf, with
// ${AWS::StackName} for !Sub to fill.
func ParameterName(leaf string) string { return "/switchboard/${AWS::StackName}/" + leaf }

// The leaves of the key rings' parameter names.
const (
	RequestStateKeysLeaf = "request-state-keys"
	ConnectorKeysLeaf    = "connector-keys"
)

// keyringFunction is the function of the Custom::KeyRing resources, which
// exists with KeyStore ssm: it may read, write and delete the two key rings'
// parameters and nothing else (with KmsKeyArn, encrypt and decrypt them
// with that key).
func keyringFunction() templateFunction {
	params := []string{parameterArn(RequestStateKeysLeaf), parameterArn(ConnectorKeysLeaf)}
	id := invoke.LogicalID(KeyringPath)
	return templateFunction{
		LogicalID: id, LogGroupID: logGroupID(id), Name: invoke.FunctionName(KeyringPath), Condition: KeyStoreIsSSM,
		Comment:     "functions/keyring: the Custom::KeyRing resources (KeyStore ssm), key rings in SSM SecureString parameters.",
		Description: "Switchboard key rings in SSM Parameter Store (CloudFormation custom resource)",
		Timeout:     fmt.Sprint(int(KeyringLimits.Timeout / time.Second)), MemoryMB: KeyringLimits.MemoryMB,
		Statements: []statement{
			{Sid: "KeepKeyRings", Actions: []string{"ssm:GetParameter", "ssm:PutParameter", "ssm:DeleteParameter"}, Resources: params},
			{Sid: "UseKmsKey", Condition: HasKmsKey, Actions: []string{"kms:Encrypt", "kms:Decrypt"}, Resources: []string{"!Ref KmsKeyArn"}},
		},
	}
}

// KeyringLimits are the custom resources' function's limits: a few SSM
// calls per request.
var KeyringLimits = catalog.Limits{Timeout: 30 * time.Second, MemoryMB: 128}

// templateConnectorKey is the stack's own key of connector credentials and
// the key ring's secret: the roles of the functions that seal credentials
// (their logical IDs) may generate data keys with the key, those that open
// them decrypt, under Context only.
type templateConnectorKey struct {
	LogicalID, RingLogicalID string
	// The ring's Custom::KeyRing with KeyStore ssm, and its parameter's name.
	ParameterLogicalID, ParameterName string
	Context                           *kmsContext
	SealRoles, OpenRoles              []string
}

// templateKeyRing is what the template's Custom::KeyRing resources name:
// their type, their function's logical ID, the attribute the functions
// read, and the request-state keys' resource and parameter name.
type templateKeyRing struct {
	ResourceType, Function, Reference  string
	RequestStateKeys, RequestStateName string
}

// keyStatement is one use of the connector key granted to some roles.
type keyStatement struct {
	Sid, Action string
	Roles       []string
}

// Statements are the key policy's grants of its use: to seal, to open;
// none for a use no function has.
func (k *templateConnectorKey) Statements() []keyStatement {
	var out []keyStatement
	if len(k.SealRoles) > 0 {
		out = append(out, keyStatement{Sid: "SealConnectorCredentials", Action: "kms:GenerateDataKey", Roles: k.SealRoles})
	}
	if len(k.OpenRoles) > 0 {
		out = append(out, keyStatement{Sid: "OpenConnectorCredentials", Action: "kms:Decrypt", Roles: k.OpenRoles})
	}
	return out
}

// credentialsContext is the encryption context a connector function may
// use the connector key (the stack's own or the customer-managed) under: the purpose of connector credentials,
// naming a tenant and a connector (and a principal for one's own), nothing
// else.
var credentialsContext = &kmsContext{PurposeKey: connector.ContextPurpose, Purpose: connector.CredentialsPurpose,
	RequiredKeys: []string{connector.ContextTenant, connector.ContextConnector},
	AllowedKeys:  []string{connector.ContextPurpose, connector.ContextTenant, connector.ContextConnector, connector.ContextPrincipal}}

// kmsContext limits a statement's KMS actions to an encryption context:
// PurposeKey must be Purpose, RequiredKeys must be present, and no key but
// AllowedKeys may be.
type kmsContext struct {
	PurposeKey, Purpose       string
	RequiredKeys, AllowedKeys []string
}

type templatePipeline struct {
	LogicalID, Name, LogGroupID, DefinitionURI string
	Substitutions                              []substitution
}

type substitution struct{ Name, LogicalID string }

// bucketName is the bucket's name: fixed from the stack's id, so that a
// function an S3 event of the bucket invokes can name the bucket without a
// reference to it. A reference would make a cycle: the bucket's
// notification needs the function, the function its role, the role the
// bucket.
const (
	stackUUID  = `{Id: !Select [2, !Split ["/", !Ref "AWS::StackId"]]}`
	bucketName = `!Sub ["switchboard-${Id}", ` + stackUUID + `]`
	bucketArn  = `!Sub ["arn:${AWS::Partition}:s3:::switchboard-${Id}", ` + stackUUID + `]`
)

// bucketObjects returns the ARNs of the bucket's objects whose keys match
// patterns, or of every object if there are none; by the bucket's name for
// a trigger (see bucketName), by reference otherwise.
func bucketObjects(trigger bool, patterns []string) []string {
	if len(patterns) == 0 {
		patterns = []string{"*"}
	}
	out := make([]string, len(patterns))
	for i, p := range patterns {
		out[i] = "!Sub ${Bucket.Arn}/" + p
		if trigger {
			out[i] = `!Sub ["arn:${AWS::Partition}:s3:::switchboard-${Id}/` + p + `", ` + stackUUID + `]`
		}
	}
	return out
}

// Tenant isolation by IAM (package tenantcreds): the template parameter
// TenantIsolation, its conditions, and the role the tool functions assume
// per tenant.
const (
	TenantIsolationOn   = "TenantIsolationOn"
	TenantIsolationOff  = "TenantIsolationOff"
	TenantRoleLogicalID = "TenantRole"
	// The resources of the tenant role's documents, as !Sub expressions
	// (the bucket by name, as the indexer's references are).
	tenantTableARN  = "arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:table/${Table}"
	tenantBucketARN = "arn:${AWS::Partition}:s3:::switchboard-${Id}"
)

// tenantKeyARN is the bucket's customer-managed key in the tenant role's
// documents, as a !Sub expression.
const tenantKeyARN = "${KmsKeyArn}"

// TenantIsolationWithKmsKey is the condition of tenant isolation with a
// customer-managed key: the tenant role's documents, and the session
// policies of the functions with blob access, grant the key's use through S3.
const TenantIsolationWithKmsKey = "TenantIsolationWithKmsKey"

// tenantRoleDocuments returns the tenant role's identity policy, boundary
// and trust policy as !Sub expressions: the policy variable of the
// session's tenant tag escaped (${!aws:...}) so that !Sub leaves it to IAM;
// the identity policy and the boundary in two versions, with the bucket's
// key when KmsKeyArn is set and without. Any role of the account may be
// trusted: only the tool functions' roles are granted sts:AssumeRole on it,
// and stack-named role patterns would break on the names CloudFormation
// truncates.
func tenantRoleDocuments() (role, boundary, trust string) {
	r := tenantcreds.Resources{TableARN: tenantTableARN, BucketARN: tenantBucketARN}
	keyed := r
	keyed.KeyARN = tenantKeyARN
	text := func(p tenantcreds.Policy) string { return quote(strings.ReplaceAll(p.JSON(), "${aws:", "${!aws:")) }
	// The connectors' sync index, which the connector functions write
	// blind along with their tenant's items (config/tenantscoped.Shared).
	withKey := func(doc func(tenantcreds.Resources, ...string) tenantcreds.Policy) string {
		keyedDoc, doc2 := doc(keyed, catalog.ConnectorSyncIndex), doc(r, catalog.ConnectorSyncIndex)
		return fmt.Sprintf("!If [%s, !Sub [%s, %s], !Sub [%s, %s]]", HasKmsKey, text(keyedDoc), stackUUID, text(doc2), stackUUID)
	}
	return withKey(tenantcreds.RolePolicy), withKey(tenantcreds.Boundary),
		"!Sub " + text(tenantcreds.TrustPolicy("arn:${AWS::Partition}:iam::${AWS::AccountId}:root", []string{"arn:${AWS::Partition}:iam::${AWS::AccountId}:role/*"}))
}

// RequestStateKeysLogicalID is the logical ID of the Secrets Manager secret
// holding the gateway's request-state key ring (package elicit).
const RequestStateKeysLogicalID = "RequestStateKeys"

// requestStateKeys is the gateway's key ring: the secret's ARN, with the
// version the RequestStateKeysVersion parameter names, if any. The gateway
// reads it once at cold start (package config/secrets), so the keys never
// sit in its environment; a changed variable starts fresh instances, which
// read the secret again (README, rotating the keys).
// With KeyStore ssm, the parameter's ARN and version instead
// (Custom::KeyRing's Reference), which a rotation changes.
const requestStateKeys = `!If [` + KeyStoreIsSSM + `, !GetAtt ` + RequestStateKeysParameterLogicalID + `.` + keyring.AttrReference +
	`, !If [HasRequestStateKeysVersion, !Sub "${` + RequestStateKeysLogicalID + `}#${RequestStateKeysVersion}", !Ref ` + RequestStateKeysLogicalID + `]]`

// OAuth with the stack's own identity provider: when OAuthResource is set
// and OAuthIssuer is not (condition UseCognito), the template creates a
// Cognito user pool, its domain and the facade's app client there, and the
// secret of the facade's signing keys.
const (
	UseCognito                = "UseCognito"
	UserPoolLogicalID         = "UserPool"
	UserPoolClientLogicalID   = "UserPoolClient"
	OAuthSigningKeysLogicalID = "OAuthSigningKeys"
	// CognitoTenantClaim is the ID token claim of the user pool's custom
	// attribute tenant, which only administrators may set.
	CognitoTenantClaim = "custom:tenant"
)

// oauthSigningKeys is the reference the gateway reads its signing keys
// with: the secret's ARN, with the version the OAuthSigningKeysVersion
// parameter names, if any (a changed variable starts fresh instances, which
// read the secret again; README, rotating the keys).
const oauthSigningKeys = `!If [HasOAuthSigningKeysVersion, !Sub "${` + OAuthSigningKeysLogicalID + `}#${OAuthSigningKeysVersion}", !Ref ` + OAuthSigningKeysLogicalID + `]`

// OpenAIApiKeyLogicalID is the secret holding the OpenAIApiKey parameter's
// value, which the functions that embed or generate read at cold start.
const OpenAIApiKeyLogicalID = "OpenAIApiKeySecret"

// BraveSearchApiKeyLogicalID is the secret holding the BraveSearchApiKey
// parameter's value, which the web search functions read at cold start.
const BraveSearchApiKeyLogicalID = "BraveSearchApiKeySecret"

// MultiVectorApiKeyLogicalID is the secret holding the MultiVectorApiKey
// parameter's value (Jina's API key), which the functions of late
// interaction read at cold start.
const MultiVectorApiKeyLogicalID = "MultiVectorApiKeySecret"

// HasKmsKey is the condition of a customer-managed KMS key (parameter
// KmsKeyArn) for the table, the bucket, the log groups and the secrets;
// without it, AWS-managed keys.
const HasKmsKey = "HasKmsKey"

// functionArn returns the ARN of the stack's function named name.
func functionArn(name string) string {
	return "!Sub arn:${AWS::Partition}:lambda:${AWS::Region}:${AWS::AccountId}:function:${AWS::StackName}-" + name
}

// The provider settings the template passes to functions that embed or
// generate, and the Bedrock models the providers default to.
const (
	envEmbedder          = config.EnvEmbedder
	envEmbeddingModel    = config.EnvEmbeddingModel
	envGenerator         = config.EnvGenerator
	envGenerationModel   = config.EnvGenerationModel
	envOpenAIBaseURL     = config.EnvOpenAIBaseURL
	envOpenAIAPIKey      = config.EnvOpenAIAPIKey
	defaultEmbedModel    = bedrock.DefaultEmbeddingModel
	defaultGenerateModel = bedrock.DefaultGenerationModel
)

// ifSet is the value of parameter param when the condition cond holds, else
// no value (the variable is left unset).
func ifSet(cond, param string) string {
	return fmt.Sprintf(`!If [%s, !Ref %s, !Ref "AWS::NoValue"]`, cond, param)
}

// bedrockModel is the ARN of a Bedrock model of kind ("foundation-model" or
// "inference-profile"): the parameter's model when set, else the default.
func bedrockModel(kind, cond, param, def string) string {
	account := ""
	if kind == "inference-profile" {
		account = "${AWS::AccountId}"
	}
	arn := "arn:${AWS::Partition}:bedrock:${AWS::Region}:" + account + ":" + kind + "/"
	return fmt.Sprintf(`!If [%s, !Sub "%s${%s}", !Sub "%s%s"]`, cond, arn, param, arn, def)
}

// logGroupID returns the logical ID of the log group of the function whose
// logical ID is id.
func logGroupID(id string) string { return strings.TrimSuffix(id, "Function") + "LogGroup" }

// templateFunctionOf describes f for the template. The gateway may invoke
// exactly the public functions of targets (those serving a public tool or a
// resource), by name: not itself, not a trigger, not an internal step.
func templateFunctionOf(f Function, targets []Function) templateFunction {
	tf := templateFunction{
		LogicalID: f.LogicalID, LogGroupID: logGroupID(f.LogicalID), Name: f.Name,
		Timeout: fmt.Sprint(int(f.Limits.Timeout / time.Second)), MemoryMB: f.Limits.MemoryMB, Reserved: f.Limits.ReservedConcurrency,
		Env: []envVar{{config.EnvTable, "!Ref Table"}},
	}
	if f.Path == GatewayPath {
		tf.Comment = "The gateway: authenticates callers, answers from the catalog, and invokes the functions below."
		tf.Description = "Switchboard gateway: MCP over Streamable HTTP"
		tf.Env = append(tf.Env,
			envVar{config.EnvFunctionPrefix, "!Sub ${AWS::StackName}-"},
			envVar{config.EnvAllowedOrigins, "!Ref AllowedOrigins"},
			envVar{config.EnvAnonymousTenant, "!Ref AnonymousTenant"},
			envVar{config.EnvRateLimits, "!Ref RateLimits"},
			// tool_search embeds through vector_embed_texts when it is hosted.
			envVar{envEmbedder, "!Ref Embedder"},
			envVar{config.EnvRequestStateKeys, requestStateKeys},
			envVar{config.EnvOAuthResource, "!Ref OAuthResource"},
			envVar{config.EnvOAuthIssuer, "!Ref OAuthIssuer"},
			envVar{config.EnvOAuthJWKSURL, "!Ref OAuthJwksUrl"},
			envVar{config.EnvOAuthTenantClaim, `!If [HasOAuthTenantClaim, !Ref OAuthTenantClaim, !If [` + UseCognito + `, "` + CognitoTenantClaim + `", !Ref "AWS::NoValue"]]`},
			envVar{config.EnvOAuthPrincipalClaim, "!Ref OAuthPrincipalClaim"},
			// With no external issuer, the facade in front of the stack's
			// Cognito user pool; the signing keys' secret by ARN, read at
			// cold start (package config/secrets).
			envVar{config.EnvOAuthFacade, `!If [` + UseCognito + `, "on", "off"]`},
			envVar{config.EnvOAuthProviderIssuer, `!If [` + UseCognito + `, !Sub "https://cognito-idp.${AWS::Region}.${AWS::URLSuffix}/${` + UserPoolLogicalID + `}", !Ref "AWS::NoValue"]`},
			envVar{config.EnvOAuthProviderClientID, `!If [` + UseCognito + `, !Ref ` + UserPoolClientLogicalID + `, !Ref "AWS::NoValue"]`},
			envVar{config.EnvOAuthSigningKeys, `!If [` + UseCognito + `, ` + oauthSigningKeys + `, !Ref "AWS::NoValue"]`},
		)
		var arns []string
		for _, t := range targets {
			if t.Public {
				arns = append(arns, functionArn(t.Name))
			}
		}
		tf.Statements = []statement{
			{Sid: "InvokeFunctions", Actions: []string{"lambda:InvokeFunction"}, Resources: arns},
			{Sid: "ReadApiKeys", Actions: tableRead, Resources: []string{"!GetAtt Table.Arn"}, LeadingKeys: []string{apikey.Partition}},
			// Rate limits: the operators' overrides, and each tenant's counters.
			{Sid: "ReadRateLimitOverrides", Actions: []string{"dynamodb:GetItem"}, Resources: []string{"!GetAtt Table.Arn"}, LeadingKeys: []string{ratelimit.OverridePK}},
			// The authorization-server facade's registered clients and spent grants.
			{Sid: "KeepOAuthClients", Actions: []string{"dynamodb:GetItem", "dynamodb:PutItem"}, Resources: []string{"!GetAtt Table.Arn"},
				LeadingKeys: []string{oauth.ClientPartition, oauth.ClientPartition + "#rate", oauth.SpentPartition}},
			{Sid: "KeepRateLimits", Actions: []string{"dynamodb:GetItem", "dynamodb:PutItem"}, Resources: []string{"!GetAtt Table.Arn"}, LeadingKeyPatterns: []string{tenant.Key("*") + "limits"}},
			{Sid: "ReadRequestStateKeys", Condition: KeyStoreIsSecretsManager, Actions: []string{"secretsmanager:GetSecretValue"}, Resources: []string{"!Ref " + RequestStateKeysLogicalID}},
			// SSM decrypts with aws/ssm, whose key policy lets the account's
			// principals use it through SSM: no KMS grant is needed.
			{Sid: "ReadRequestStateKeysParameter", Condition: KeyStoreIsSSM, Actions: []string{"ssm:GetParameter"}, Resources: []string{parameterArn(RequestStateKeysLeaf)}},
			{Sid: "ReadOAuthSigningKeys", Condition: UseCognito, Actions: []string{"secretsmanager:GetSecretValue"}, Resources: []string{"!Ref " + OAuthSigningKeysLogicalID}},
			// The signing keys' secret, with a customer-managed key.
			{Sid: "UseKmsKey", Condition: HasKmsKey, Actions: []string{"kms:Decrypt"}, Resources: []string{"!Ref KmsKeyArn"}},
		}
		return tf
	}
	tf.Comment = fmt.Sprintf("functions/%s serves %s.", f.Path, strings.Join(f.Serves, ", "))
	tf.Description = "Switchboard " + strings.Join(f.Serves, ", ")
	bucket, bucketARN := "!Ref Bucket", "!GetAtt Bucket.Arn"
	if f.Trigger != nil {
		tf.Comment = fmt.Sprintf("functions/%s: %s", f.Path, f.Trigger.Description)
		tf.Description = "Switchboard " + f.Path
		tf.S3 = f.Trigger.S3
		bucket, bucketARN = bucketName, bucketArn
		if f.Trigger.Schedule != "" {
			id := ScheduleLogicalID(f.LogicalID)
			tf.Schedule = &templateSchedule{LogicalID: id, RoleLogicalID: id + "Role", Function: f.LogicalID, Expression: f.Trigger.Schedule}
		}
	}
	if tf.S3 != nil {
		// S3 invokes it asynchronously: what fails after Lambda's retries
		// goes to its failure queue rather than being dropped.
		tf.FailureQueue = failureQueueID(f.LogicalID)
		tf.Statements = append(tf.Statements, statement{Sid: "SendFailedEvents", Actions: []string{"sqs:SendMessage"}, Resources: []string{"!GetAtt " + tf.FailureQueue + ".Arn"}})
	}
	// With tenant isolation on, the function reaches the table and the
	// bucket only as each call's tenant, through the tenant role
	// (config/tenantscoped); its own role keeps none of their statements.
	own := func(st statement) statement { st.Condition = TenantIsolationOff; return st }
	switch f.Table {
	case catalog.Read:
		tf.Statements = append(tf.Statements, own(statement{Sid: "TableRead", Actions: tableRead, Resources: []string{"!GetAtt Table.Arn"}}))
	case catalog.ReadPut:
		tf.Statements = append(tf.Statements, own(statement{Sid: "TableReadPut", Actions: concat(tableRead, tablePut), Resources: []string{"!GetAtt Table.Arn"}}))
	case catalog.ReadWrite:
		actions := concat(tableRead, tableWrite)
		if f.Deletes {
			actions = concat(actions, tableDelete)
		}
		tf.Statements = append(tf.Statements, own(statement{Sid: "TableReadWrite", Actions: actions, Resources: []string{"!GetAtt Table.Arn"}}))
	}
	if f.Table != catalog.NoAccess || f.Blobs != catalog.NoAccess {
		tf.Env = append(tf.Env,
			envVar{config.EnvTenantRoleARN, `!If [` + TenantIsolationOn + `, !GetAtt ` + TenantRoleLogicalID + `.Arn, !Ref "AWS::NoValue"]`},
			envVar{config.EnvTableARN, `!If [` + TenantIsolationOn + `, !GetAtt Table.Arn, !Ref "AWS::NoValue"]`})
		tf.Statements = append(tf.Statements, statement{Sid: "AssumeTenantRole", Condition: TenantIsolationOn,
			Actions: []string{"sts:AssumeRole", "sts:TagSession"}, Resources: []string{"!GetAtt " + TenantRoleLogicalID + ".Arn"}})
	}
	if f.Connects && f.Trigger != nil {
		// The scheduled sync reads and cleans the connectors' sync index,
		// outside every tenant's keys, as itself; each sync acts as its
		// connector's tenant.
		tf.Statements = append(tf.Statements, statement{Sid: "SweepSyncIndex", Condition: TenantIsolationOn,
			Actions: []string{"dynamodb:Query", "dynamodb:DeleteItem"}, Resources: []string{"!GetAtt Table.Arn"}, LeadingKeys: []string{catalog.ConnectorSyncIndex}})
	}
	if f.Table == catalog.ReadWrite && strings.HasPrefix(f.Path, "vector/") {
		// The vector functions that store charge quotas, whose operators'
		// overrides lie outside every tenant's keys.
		tf.Statements = append(tf.Statements, statement{Sid: "ReadQuotaOverrides", Condition: TenantIsolationOn,
			Actions: []string{"dynamodb:GetItem"}, Resources: []string{"!GetAtt Table.Arn"}, LeadingKeys: []string{quota.OverridePK}})
	}
	if f.Blobs != catalog.NoAccess {
		tf.Env = append(tf.Env, envVar{config.EnvBucket, bucket},
			envVar{config.EnvBucketARN, `!If [` + TenantIsolationOn + `, ` + bucketARN + `, !Ref "AWS::NoValue"]`},
			envVar{config.EnvBucketKeyARN, `!If [` + TenantIsolationWithKmsKey + `, !Ref KmsKeyArn, !Ref "AWS::NoValue"]`})
		// Listing stays bucket-wide, even for a function narrowed to some
		// keys: without it, S3 answers a missing object with 403, not 404,
		// and a reader cannot tell a gone object from a refusal.
		tf.Statements = append(tf.Statements, own(statement{Sid: "BucketList", Actions: []string{"s3:ListBucket"}, Resources: []string{bucketARN}}))
		objects := statement{Sid: "BucketObjectsRead", Actions: bucketObjectRead, Resources: bucketObjects(f.Trigger != nil, f.BlobKeys)}
		if f.Blobs == catalog.ReadWrite {
			objects.Sid, objects.Actions = "BucketObjectsReadWrite", concat(bucketObjectRead, bucketObjectRW)
		}
		tf.Statements = append(tf.Statements, own(objects))
	}
	if len(f.Invokes) > 0 {
		tf.Env = append(tf.Env, envVar{config.EnvFunctionPrefix, "!Sub ${AWS::StackName}-"})
		var arns []string
		for _, p := range f.Invokes {
			arns = append(arns, functionArn(invoke.FunctionName(p)))
		}
		tf.Statements = append(tf.Statements, statement{Sid: "InvokeFunctions", Actions: []string{"lambda:InvokeFunction"}, Resources: arns})
		// The tools it calls for its caller count against the caller's rate
		// limits, as the gateway's calls do (lambdafn's Deps.Limiter): the
		// same limits, counters and overrides; with tenant isolation on,
		// with the function's own role, as the gateway keeps them.
		tf.Env = append(tf.Env, envVar{config.EnvRateLimits, "!Ref RateLimits"})
		tf.Statements = append(tf.Statements,
			statement{Sid: "ReadRateLimitOverrides", Condition: TenantIsolationOn, Actions: []string{"dynamodb:GetItem"}, Resources: []string{"!GetAtt Table.Arn"}, LeadingKeys: []string{ratelimit.OverridePK}},
			statement{Sid: "KeepRateLimits", Condition: TenantIsolationOn, Actions: []string{"dynamodb:GetItem", "dynamodb:PutItem"}, Resources: []string{"!GetAtt Table.Arn"},
				LeadingKeyPatterns: []string{tenant.Key("*") + "limits"}})
	}
	if f.Pipeline {
		tf.Env = append(tf.Env, envVar{config.EnvPipelineARN, "!Ref " + PipelineLogicalID})
		tf.Statements = append(tf.Statements, statement{Sid: "RunPipeline", Actions: []string{"states:StartSyncExecution"}, Resources: []string{"!Ref " + PipelineLogicalID}})
	}
	if f.Embeds {
		tf.Env = append(tf.Env, envVar{envEmbedder, "!Ref Embedder"}, envVar{envEmbeddingModel, ifSet("HasEmbeddingModel", "EmbeddingModel")})
		tf.Statements = append(tf.Statements, statement{Sid: "BedrockEmbed", Condition: "EmbedderIsBedrock", Actions: []string{"bedrock:InvokeModel"},
			Resources: []string{bedrockModel("foundation-model", "HasEmbeddingModel", "EmbeddingModel", defaultEmbedModel)}})
	}
	if f.Generates {
		tf.Env = append(tf.Env, envVar{envGenerator, "!Ref Generator"}, envVar{envGenerationModel, ifSet("HasGenerationModel", "GenerationModel")})
		// A function that streams the model's reply (the chat) calls
		// ConverseStream, which Bedrock authorises as
		// InvokeModelWithResponseStream; one that only reports progress
		// (ingestion) does not.
		actions := []string{"bedrock:InvokeModel"}
		if f.StreamsReply {
			actions = append(actions, "bedrock:InvokeModelWithResponseStream")
		}
		tf.Statements = append(tf.Statements, statement{Sid: "BedrockGenerate", Condition: "GeneratorIsBedrock", Actions: actions,
			Resources: []string{
				bedrockModel("foundation-model", "HasGenerationModel", "GenerationModel", defaultGenerateModel),
				bedrockModel("inference-profile", "HasGenerationModel", "GenerationModel", defaultGenerateModel),
			}})
	}
	if f.Connects {
		// Credentials are sealed with the customer-managed key when one is
		// given, else with the stack's own key (seal/kms; its key policy
		// grants the use, since a role policy naming the key would make a
		// cycle, the key's policy naming the role) or with the key ring of
		// the ConnectorKeys secret or parameter, read at start (seal/localkey).
		tf.Env = append(tf.Env, envVar{config.EnvConnectorKey, connectorKey},
			envVar{config.EnvConnectorCacheTTL, "!Ref ConnectorCacheTtl"})
		tf.Statements = append(tf.Statements, statement{Sid: "ReadConnectorKeys", Condition: UseConnectorKeySecret,
			Actions: []string{"secretsmanager:GetSecretValue"}, Resources: []string{"!Ref " + ConnectorKeysLogicalID}},
			statement{Sid: "ReadConnectorKeysParameter", Condition: UseConnectorKeyParameter,
				Actions: []string{"ssm:GetParameter"}, Resources: []string{parameterArn(ConnectorKeysLeaf)}})
		if f.Seals {
			tf.Statements = append(tf.Statements, statement{Sid: "SealConnectorCredentials", Condition: HasKmsKey,
				Actions: []string{"kms:GenerateDataKey"}, Resources: []string{"!Ref KmsKeyArn"}, EncryptionContext: credentialsContext})
		}
		if f.Opens {
			tf.Statements = append(tf.Statements, statement{Sid: "OpenConnectorCredentials", Condition: HasKmsKey,
				Actions: []string{"kms:Decrypt"}, Resources: []string{"!Ref KmsKeyArn"}, EncryptionContext: credentialsContext})
		}
	}
	if f.Embeds || f.Generates {
		// The key's secret by ARN, read at cold start (config/secrets): the
		// key itself is never in the environment.
		tf.Env = append(tf.Env, envVar{envOpenAIBaseURL, ifSet("HasOpenAIBaseUrl", "OpenAIBaseUrl")},
			envVar{envOpenAIAPIKey, `!If [HasOpenAIApiKey, !Ref ` + OpenAIApiKeyLogicalID + `, !Ref "AWS::NoValue"]`})
		tf.Statements = append(tf.Statements, statement{Sid: "ReadProviderKeys", Condition: "HasOpenAIApiKey",
			Actions: []string{"secretsmanager:GetSecretValue"}, Resources: []string{"!Ref " + OpenAIApiKeyLogicalID}})
	}
	if f.Searches {
		// The Brave key's secret by ARN, as the provider's key above.
		tf.Env = append(tf.Env, envVar{config.EnvWebSearchBackends, "!Ref WebSearchBackends"},
			envVar{config.EnvWebSearchBraveAPIKey, `!If [HasBraveSearchApiKey, !Ref ` + BraveSearchApiKeyLogicalID + `, !Ref "AWS::NoValue"]`},
			envVar{config.EnvWebSearchSearXNGURL, ifSet("HasWebSearchSearxngUrl", "WebSearchSearxngUrl")},
			envVar{config.EnvWebSearchCacheTTL, "!Ref WebSearchCacheTtl"},
			envVar{config.EnvWebSearchRate, "!Ref WebSearchRate"})
		tf.Statements = append(tf.Statements, statement{Sid: "ReadWebSearchKeys", Condition: "HasBraveSearchApiKey",
			Actions: []string{"secretsmanager:GetSecretValue"}, Resources: []string{"!Ref " + BraveSearchApiKeyLogicalID}})
	}
	if f.MultiVector {
		// Late interaction's token embedder; its key by its secret's ARN,
		// read at cold start (config/secrets), as the OpenAI key is.
		tf.Env = append(tf.Env, envVar{config.EnvMultiVector, "!Ref MultiVector"},
			envVar{config.EnvMultiVectorModel, ifSet("HasMultiVectorModel", "MultiVectorModel")},
			envVar{config.EnvMultiVectorURL, ifSet("HasMultiVectorUrl", "MultiVectorUrl")},
			envVar{config.EnvMultiVectorAPIKey, `!If [HasMultiVectorApiKey, !Ref ` + MultiVectorApiKeyLogicalID + `, !Ref "AWS::NoValue"]`})
		tf.Statements = append(tf.Statements, statement{Sid: "ReadMultiVectorKey", Condition: "HasMultiVectorApiKey",
			Actions: []string{"secretsmanager:GetSecretValue"}, Resources: []string{"!Ref " + MultiVectorApiKeyLogicalID}})
	}
	if f.Blobs != catalog.NoAccess || f.Embeds || f.Generates || f.MultiVector {
		// With a customer-managed key: the bucket's objects (SSE-KMS) and the
		// provider's secret are decrypted, and objects encrypted, with it.
		tf.Statements = append(tf.Statements, statement{Sid: "UseKmsKey", Condition: HasKmsKey,
			Actions: []string{"kms:Decrypt", "kms:GenerateDataKey"}, Resources: []string{"!Ref KmsKeyArn"}})
	} else if f.Searches {
		// The Brave key's secret, with a customer-managed key.
		tf.Statements = append(tf.Statements, statement{Sid: "UseKmsKey", Condition: HasKmsKey,
			Actions: []string{"kms:Decrypt"}, Resources: []string{"!Ref KmsKeyArn"}})
	}
	return tf
}

// pipelineOf describes the state machine for the template, or returns nil
// when no function runs the pipeline. A function that runs it when the
// catalog's pipeline tasks do not fill every substitution of the definition
// is an error.
func pipelineOf(all []Function, tasks []catalog.PipelineTask) (*templatePipeline, error) {
	byPath := map[string]Function{}
	runs := false
	for _, f := range all {
		byPath[f.Path] = f
		runs = runs || f.Pipeline
	}
	if !runs {
		return nil, nil
	}
	p := &templatePipeline{LogicalID: PipelineLogicalID, Name: PipelineName, LogGroupID: pipelineLogGroupID, DefinitionURI: infra.RAGPipelineFile}
	var have []string
	for _, t := range tasks {
		f, ok := byPath[t.Function]
		if !ok {
			return nil, fmt.Errorf("deploy: pipeline task %s names function %s, which the catalog lacks", t.Substitution, t.Function)
		}
		p.Substitutions = append(p.Substitutions, substitution{Name: t.Substitution, LogicalID: f.LogicalID})
		have = append(have, t.Substitution)
	}
	sort.Strings(have)
	if names := statemachine.Substitutions(infra.RAGPipeline); !slices.Equal(names, have) {
		return nil, fmt.Errorf("deploy: %s uses the substitutions %v, but the catalog's pipeline tasks define %v", infra.RAGPipelineFile, names, have)
	}
	return p, nil
}

// renderPolicies writes statements as the YAML items of a function's
// Policies list, indented by indent spaces: one policy holding the
// unconditional statements, then one per conditional statement, wrapped whole
// in Fn::If. IAM refuses a policy without statements, so a condition may
// drop a policy, never empty one.
func renderPolicies(statements []statement, indent int) string {
	var b strings.Builder
	pad := strings.Repeat(" ", indent)
	var always []statement
	for _, st := range statements {
		if st.Condition == "" {
			always = append(always, st)
		}
	}
	if len(always) > 0 {
		fmt.Fprintf(&b, "%s- Statement:\n", pad)
		writeStatements(&b, always, indent+4)
	}
	for _, st := range statements {
		if st.Condition == "" {
			continue
		}
		fmt.Fprintf(&b, "%s- !If\n%s  - %s\n%s  - Statement:\n", pad, pad, st.Condition, pad)
		writeStatements(&b, []statement{st}, indent+6)
		fmt.Fprintf(&b, "%s  - !Ref AWS::NoValue\n", pad)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// writeStatements writes statements as the YAML items of a policy's
// Statement list, indented by indent spaces.
func writeStatements(b *strings.Builder, statements []statement, indent int) {
	pad := strings.Repeat(" ", indent)
	in := pad + "  "
	for _, st := range statements {
		fmt.Fprintf(b, "%s- Sid: %s\n", pad, st.Sid)
		fmt.Fprintf(b, "%sEffect: Allow\n%sAction:\n", in, in)
		for _, a := range st.Actions {
			fmt.Fprintf(b, "%s  - %s\n", in, a)
		}
		fmt.Fprintf(b, "%sResource:\n", in)
		for _, r := range st.Resources {
			fmt.Fprintf(b, "%s  - %s\n", in, r)
		}
		if len(st.LeadingKeys)+len(st.LeadingKeyPatterns) > 0 || st.EncryptionContext != nil {
			fmt.Fprintf(b, "%sCondition:\n", in)
		}
		if c := st.EncryptionContext; c != nil {
			fmt.Fprintf(b, "%s  StringEquals:\n%s    kms:EncryptionContext:%s: %s\n%s  \"Null\":\n", in, in, c.PurposeKey, quote(c.Purpose), in)
			for _, k := range c.RequiredKeys {
				fmt.Fprintf(b, "%s    kms:EncryptionContext:%s: \"false\"\n", in, k)
			}
			fmt.Fprintf(b, "%s  ForAllValues:StringEquals:\n%s    kms:EncryptionContextKeys:\n", in, in)
			for _, k := range c.AllowedKeys {
				fmt.Fprintf(b, "%s      - %s\n", in, quote(k))
			}
		}
		for _, c := range []struct {
			op   string
			keys []string
		}{{"StringEquals", st.LeadingKeys}, {"StringLike", st.LeadingKeyPatterns}} {
			if len(c.keys) > 0 {
				fmt.Fprintf(b, "%s  ForAllValues:%s:\n%s    dynamodb:LeadingKeys:\n", in, c.op, in)
				for _, k := range c.keys {
					fmt.Fprintf(b, "%s      - %s\n", in, quote(k))
				}
			}
		}
	}
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
	"quote":    quote,
	"join":     strings.Join,
	"policies": renderPolicies,
}).Parse(infra.Template))

// Template renders template.yaml for cat.
func Template(cat *catalog.Catalog) ([]byte, error) {
	data := templateData{
		PK: store.AttrPK, SK: store.AttrSK, ExpiresAt: store.AttrExpiresAt,
		OriginsPattern: originsPattern, TenantPattern: tenantPattern,
		DefaultRetention: DefaultLogRetentionDays, BucketName: bucketName, StackUUID: stackUUID,
		OAuthCallbackPath: oauth.PathCallback, CognitoTenantClaim: CognitoTenantClaim,
	}
	data.TenantRolePolicy, data.TenantBoundary, data.TenantTrust = tenantRoleDocuments()
	data.FrontDoor = frontDoorOf(cat)
	for _, d := range logRetentionValues {
		data.RetentionValues = append(data.RetentionValues, fmt.Sprint(d))
	}
	seen := map[string]string{}
	var connectorFunctions []string // the functions that reach connectors: their log groups hold its records
	all := Functions(cat)
	for i, f := range all {
		for _, key := range []string{"logical ID " + f.LogicalID, "name " + f.Name} {
			if other, ok := seen[key]; ok {
				return nil, fmt.Errorf("deploy: functions %s and %s would both have the %s; rename one", other, f.Path, key)
			}
			seen[key] = f.Path
		}
		data.Functions = append(data.Functions, templateFunctionOf(f, all))
		if f.Path == GatewayPath {
			data.Functions[i].Timeout = fmt.Sprintf("!If [FrontDoorIsRest, %d, %d]", data.FrontDoor.StreamingTimeout, data.FrontDoor.HttpTimeout)
		}
		if f.Connects {
			connectorFunctions = append(connectorFunctions, f.Name)
			if data.ConnectorKey == nil {
				data.ConnectorKey = &templateConnectorKey{LogicalID: ConnectorKeyLogicalID, RingLogicalID: ConnectorKeysLogicalID, Context: credentialsContext}
			}
			// SAM names a function's generated role <logical ID>Role.
			if f.Seals {
				data.ConnectorKey.SealRoles = append(data.ConnectorKey.SealRoles, f.LogicalID+"Role")
			}
			if f.Opens {
				data.ConnectorKey.OpenRoles = append(data.ConnectorKey.OpenRoles, f.LogicalID+"Role")
			}
		}
	}
	data.Functions = append(data.Functions, keyringFunction())
	data.KeyRing = &templateKeyRing{ResourceType: keyring.ResourceType, Function: invoke.LogicalID(KeyringPath), Reference: keyring.AttrReference,
		RequestStateKeys: RequestStateKeysParameterLogicalID, RequestStateName: ParameterName(RequestStateKeysLeaf)}
	if data.ConnectorKey != nil {
		data.ConnectorKey.ParameterLogicalID, data.ConnectorKey.ParameterName = ConnectorKeysParameterLogicalID, ParameterName(ConnectorKeysLeaf)
	}
	var err error
	if data.Pipeline, err = pipelineOf(all, cat.PipelineTasks()); err != nil {
		return nil, err
	}
	fams := families(cat)
	data.AccessLogGroupID, data.AccessLogFormat = AccessLogGroupID, accessLogFormat()
	data.DashboardID, data.Namespace, data.FamilyDimension, data.AlarmPeriod = DashboardLogicalID, metrics.Namespace, metrics.DimFamily, alarmPeriod
	data.Alarms = familyAlarms(fams, cat)
	for _, f := range data.Functions {
		if f.FailureQueue != "" {
			q := templateFailureQueue{LogicalID: f.FailureQueue, Function: f.Name}
			data.FailureQueues = append(data.FailureQueues, q)
			data.Alarms = append(data.Alarms, failureAlarm(q, f.Name))
		}
	}
	data.Dashboard = dashboard(fams, data.FailureQueues, connectorFunctions)
	var b bytes.Buffer
	if err := samTemplate.Execute(&b, data); err != nil {
		return nil, fmt.Errorf("deploy: rendering template.yaml: %w", err)
	}
	return b.Bytes(), nil
}

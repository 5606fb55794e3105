package main

import (
	"cmp"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/awslabs/goformation/v7/intrinsics"
)

// Site is what the template's references resolve to here: the stack's
// pseudo parameters and the parameters' values.
type Site struct {
	StackName, Region, Account string
	// Parameters override the template's parameter defaults, as
	// sam deploy --parameter-overrides does.
	Parameters map[string]string
	// Keys are the ARNs of the keys the local KMS made for the template's
	// KMS keys ([Template.Keys]), by logical ID. A key without one reads as
	// key/pending: such a reading serves to build the functions, not to
	// run them.
	Keys map[string]string
	// Suffix stands for the random part of the names CloudFormation
	// generates (a table without TableName: <stack>-Table-<suffix>), and of
	// the stack id.
	Suffix string
	// Custom are the attributes the template's custom resources answered
	// their Create with ([Template.CustomResources]), by logical ID. An
	// attribute without one reads as pending, as a key does.
	Custom map[string]map[string]string
}

// StackID is the stack's ARN, AWS::StackId.
func (s Site) StackID() string {
	return "arn:aws:cloudformation:" + s.Region + ":" + s.Account + ":stack/" + s.StackName + "/00000000-0000-4000-8000-" + s.Suffix
}

// Function is a function of the template as this stack runs it.
type Function struct {
	LogicalID string
	Name      string // FunctionName, as resolved
	ARN       string
	Timeout   int // seconds
	MemoryMB  int
	// Env is the template's environment, resolved: variables whose value is
	// AWS::NoValue are absent, as on Lambda.
	Env map[string]string
	// Logging is the function's (or Globals') LoggingConfig: Lambda passes
	// LogFormat and ApplicationLogLevel to the runtime.
	LogFormat, LogLevel string
	// HTTP are its API Gateway events; S3 its bucket events.
	HTTP []HTTPEvent
	S3   []S3Event
}

// HTTPEvent is an API event of a function: a route of the front door.
type HTTPEvent struct {
	Type          string // HttpApi, or Api (a REST API)
	Method, Path  string
	PayloadFormat string // HttpApi: "2.0" or "1.0"
	// Streaming marks a REST API integration whose ResponseTransferMode is
	// STREAM (InvokeWithResponseStream).
	Streaming bool
	// Stage is a REST API's stage (AWS::ApiGateway::Stage), the first part
	// of its URLs' paths.
	Stage string
}

// S3Event is an S3 event source of a function: the bucket's notification.
type S3Event struct {
	Bucket string
	Events []string // such as s3:ObjectCreated:*
	Prefix string
}

// Template is template.yaml read for this stack.
type Template struct {
	Functions []*Function
	// Table and Bucket are the physical names of the template's table and bucket.
	Table, Bucket string
	// StateMachines are its state machines: ARN, and definition file with
	// its substitutions resolved.
	StateMachines []StateMachine
	// Substituted lists what the references resolved to, for the banner:
	// "Table -> switchboard-local-Table-X".
	Substituted []string
	// Keys are the logical IDs of the KMS keys the template creates with
	// its parameters, which the local KMS must make ([Site.Keys]).
	Keys []string
	// Secrets are the values of the secrets the template generates, by ARN,
	// which the stack's Secrets Manager serves.
	Secrets map[string]string
	// CustomResources are the custom resources the template creates with
	// its parameters (Custom::*), which this stack creates by invoking
	// their functions as CloudFormation does ([Site.Custom]).
	CustomResources []CustomResource
}

// CustomResource is a custom resource of the template: its type, the ARN
// of the function it names as ServiceToken, and its properties, resolved.
type CustomResource struct {
	LogicalID, Type, ServiceToken string
	Properties                    map[string]any
}

// StateMachine is a state machine of the template.
type StateMachine struct {
	LogicalID, ARN, Type string
	DefinitionURI        string
	Substitutions        map[string]string
}

// unresolved marks a reference this stack has no value for; it must not
// reach a function's environment.
const unresolved = "<unresolved "

// ReadTemplate resolves the SAM template data for site: goformation's
// intrinsics processor, with Ref, Fn::GetAtt and Fn::Sub answered by site's
// rules (the other functions are goformation's), and Secrets Manager dynamic
// references ({{resolve:secretsmanager:...}}) to secrets the template
// generates answered with a value generated as the secret's
// GenerateSecretString asks.
func ReadTemplate(data []byte, site Site) (*Template, error) {
	raw, err := intrinsics.ProcessYAML(data, &intrinsics.ProcessorOptions{NoProcess: true})
	if err != nil {
		return nil, fmt.Errorf("reading the template: %w", err)
	}
	var doc struct {
		Parameters map[string]any
		Resources  map[string]struct {
			Type       string
			Properties map[string]any
		}
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("reading the template: %w", err)
	}
	r := &resolver{site: site, params: doc.Parameters, types: map[string]string{}, props: map[string]map[string]any{}, seen: map[string]string{}}
	for id, res := range doc.Resources {
		r.types[id] = res.Type
		r.props[id] = res.Properties
	}
	params := map[string]any{}
	for k, v := range site.Parameters {
		if err := checkParameter(doc.Parameters, k, v); err != nil {
			return nil, err
		}
		params[k] = v
	}
	opts := &intrinsics.ProcessorOptions{
		EvaluateConditions: true,
		ParameterOverrides: params,
		IntrinsicHandlerOverrides: map[string]intrinsics.IntrinsicHandler{
			"Ref":        func(_ string, in, tmpl any) any { return r.ref(in, tmpl) },
			"Fn::GetAtt": func(_ string, in, _ any) any { return r.getAtt(in) },
			"Fn::Sub":    func(_ string, in, tmpl any) any { return r.sub(in, tmpl) },
			"Fn::Split":  func(_ string, in, _ any) any { return split(in) },
		},
	}
	r.opts = opts
	processed, err := intrinsics.ProcessJSON(hideConditions(raw), opts)
	if err != nil {
		return nil, fmt.Errorf("resolving the template: %w", err)
	}
	var out struct {
		Conditions map[string]bool
		Globals    struct{ Function functionProps }
		Resources  map[string]apiResource
	}
	if err := json.Unmarshal(processed, &out); err != nil {
		return nil, fmt.Errorf("reading the resolved template: %w", err)
	}
	for id, res := range out.Resources {
		if res.Condition != "" && !out.Conditions[res.Condition] {
			delete(out.Resources, id) // CloudFormation creates no such resource
		}
	}
	secrets := map[string]string{} // secret ARN -> generated value
	t := &Template{Secrets: secrets}
	for _, id := range slices.Sorted(maps.Keys(out.Resources)) {
		res := out.Resources[id]
		switch res.Type {
		case "AWS::SecretsManager::Secret":
			var p struct {
				GenerateSecretString *struct {
					SecretStringTemplate, GenerateStringKey string
					PasswordLength                          int
					ExcludePunctuation                      bool
				}
			}
			if err := json.Unmarshal(res.Properties, &p); err != nil {
				return nil, fmt.Errorf("secret %s: %w", id, err)
			}
			if g := p.GenerateSecretString; g != nil && g.ExcludePunctuation {
				var v map[string]any
				if err := json.Unmarshal([]byte(g.SecretStringTemplate), &v); err != nil {
					return nil, fmt.Errorf("secret %s: SecretStringTemplate: %w", id, err)
				}
				v[g.GenerateStringKey] = alphanumeric(max(g.PasswordLength, 32))
				b, _ := json.Marshal(v)
				secrets[r.refOf(id)] = string(b)
				t.Substituted = append(t.Substituted, fmt.Sprintf("%s: generated as its GenerateSecretString says (%s with %q)", id, g.SecretStringTemplate, g.GenerateStringKey))
			}
		case "AWS::KMS::Key":
			t.Keys = append(t.Keys, id)
		case "AWS::DynamoDB::Table":
			t.Table = r.refOf(id)
		case "AWS::S3::Bucket":
			t.Bucket = r.refOf(id)
		case "AWS::Serverless::StateMachine":
			var p struct {
				Type                    string
				DefinitionUri           string
				DefinitionSubstitutions map[string]string
			}
			if err := json.Unmarshal(res.Properties, &p); err != nil {
				return nil, fmt.Errorf("state machine %s: %w", id, err)
			}
			t.StateMachines = append(t.StateMachines, StateMachine{LogicalID: id, ARN: r.refOf(id), Type: p.Type, DefinitionURI: p.DefinitionUri, Substitutions: p.DefinitionSubstitutions})
		default:
			if !strings.HasPrefix(res.Type, "Custom::") {
				break
			}
			c := CustomResource{LogicalID: id, Type: res.Type}
			if err := json.Unmarshal(res.Properties, &c.Properties); err != nil {
				return nil, fmt.Errorf("custom resource %s: %w", id, err)
			}
			c.ServiceToken, _ = c.Properties["ServiceToken"].(string)
			t.CustomResources = append(t.CustomResources, c)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(out.Resources)) {
		res := out.Resources[id]
		if res.Type != "AWS::Serverless::Function" {
			continue
		}
		var p functionProps
		if err := json.Unmarshal(res.Properties, &p); err != nil {
			return nil, fmt.Errorf("function %s: %w", id, err)
		}
		f, err := p.function(id, out.Globals.Function, r, secrets)
		if err != nil {
			return nil, err
		}
		t.Functions = append(t.Functions, f)
	}
	if err := addRoutes(t, out.Resources); err != nil {
		return nil, err
	}
	for _, k := range slices.Sorted(maps.Keys(r.seen)) {
		t.Substituted = append(t.Substituted, k+" -> "+r.seen[k])
	}
	return t, nil
}

// checkParameter refuses a value CloudFormation would refuse for the
// parameter name: a parameter the template does not declare, a value not
// among its AllowedValues or not matching its AllowedPattern.
func checkParameter(params map[string]any, name, value string) error {
	p, ok := params[name].(map[string]any)
	if !ok {
		return fmt.Errorf("parameter %s: the template has no such parameter", name)
	}
	if allowed, ok := p["AllowedValues"].([]any); ok && !slices.ContainsFunc(allowed, func(a any) bool { return fmt.Sprint(a) == value }) {
		return fmt.Errorf("parameter %s: %q is not one of its allowed values %v", name, value, allowed)
	}
	if pattern, ok := p["AllowedPattern"].(string); ok {
		re, err := regexp.Compile(pattern)
		if err != nil {
			return fmt.Errorf("parameter %s: AllowedPattern: %w", name, err)
		}
		if !re.MatchString(value) {
			return fmt.Errorf("parameter %s: %q does not match %s", name, value, pattern)
		}
	}
	return nil
}

// apiResource is a resource of the template, resolved.
type apiResource = struct {
	Type       string
	Condition  string `json:"StackCondition"`
	Properties json.RawMessage
}

// integrationURI matches the function ARN in a REST API's Lambda integration URI.
var integrationURI = regexp.MustCompile(`/functions/(arn:[^/]+)/(invocations|response-streaming-invocations)$`)

// addRoutes adds to t's functions the routes the template declares as API
// Gateway resources rather than as function events: an HTTP API's routes
// (AWS::ApiGatewayV2::Route, through their AWS_PROXY integration) and a
// REST API's methods (AWS::ApiGateway::Method on the path of its
// AWS::ApiGateway::Resource chain).
func addRoutes(t *Template, resources map[string]apiResource) error {
	byARN := map[string]*Function{}
	for _, f := range t.Functions {
		byARN[f.ARN] = f
	}
	var props = func(id string, v any) error {
		if err := json.Unmarshal(resources[id].Properties, v); err != nil {
			return fmt.Errorf("%s: %w", id, err)
		}
		return nil
	}
	paths := map[string]string{} // REST resource id -> path
	var path func(id string) (string, error)
	path = func(id string) (string, error) {
		if id == restRoot {
			return "", nil
		}
		if p, ok := paths[id]; ok {
			return p, nil
		}
		var res struct{ ParentId, PathPart string }
		if err := props(id, &res); err != nil {
			return "", err
		}
		if res.ParentId == id {
			return "", fmt.Errorf("%s is its own parent", id)
		}
		parent, err := path(res.ParentId)
		if err != nil {
			return "", err
		}
		paths[id] = parent + "/" + res.PathPart
		return paths[id], nil
	}
	stage, err := restStage(resources)
	if err != nil {
		return err
	}
	for _, id := range slices.Sorted(maps.Keys(resources)) {
		switch resources[id].Type {
		case "AWS::ApiGatewayV2::Route":
			var route struct{ RouteKey, Target string }
			if err := props(id, &route); err != nil {
				return err
			}
			var in struct{ IntegrationType, IntegrationUri, PayloadFormatVersion string }
			if err := props(strings.TrimPrefix(route.Target, "integrations/"), &in); err != nil {
				return fmt.Errorf("route %s: its integration %s: %w", id, route.Target, err)
			}
			method, p, _ := strings.Cut(route.RouteKey, " ")
			f := byARN[in.IntegrationUri]
			if in.IntegrationType != "AWS_PROXY" || f == nil {
				return fmt.Errorf("route %s: this stack runs AWS_PROXY integrations of the template's functions, not %s %s", id, in.IntegrationType, in.IntegrationUri)
			}
			f.HTTP = append(f.HTTP, HTTPEvent{Type: "HttpApi", Method: method, Path: p, PayloadFormat: cmp.Or(in.PayloadFormatVersion, "2.0")})
		case "AWS::ApiGateway::Method":
			var m struct {
				ResourceId, HttpMethod string
				Integration            struct{ Type, Uri, ResponseTransferMode string }
			}
			if err := props(id, &m); err != nil {
				return err
			}
			p, err := path(m.ResourceId)
			if err != nil {
				return fmt.Errorf("method %s: %w", id, err)
			}
			g := integrationURI.FindStringSubmatch(m.Integration.Uri)
			if m.Integration.Type != "AWS_PROXY" || g == nil || byARN[g[1]] == nil {
				return fmt.Errorf("method %s: this stack runs AWS_PROXY integrations of the template's functions, not %s %s", id, m.Integration.Type, m.Integration.Uri)
			}
			if stage == "" {
				return fmt.Errorf("method %s: the template deploys its REST API to no stage (AWS::ApiGateway::Stage)", id)
			}
			f := byARN[g[1]]
			f.HTTP = append(f.HTTP, HTTPEvent{Type: "Api", Method: m.HttpMethod, Path: cmp.Or(p, "/"), PayloadFormat: "1.0",
				Streaming: m.Integration.ResponseTransferMode == "STREAM", Stage: stage})
		}
	}
	return nil
}

// restStage returns the StageName of the template's REST API stage, or ""
// if it has none. This stack serves one REST API at one stage.
func restStage(resources map[string]apiResource) (string, error) {
	var stages []string
	for _, id := range slices.Sorted(maps.Keys(resources)) {
		if resources[id].Type != "AWS::ApiGateway::Stage" {
			continue
		}
		var st struct{ StageName string }
		if err := json.Unmarshal(resources[id].Properties, &st); err != nil || st.StageName == "" {
			return "", fmt.Errorf("stage %s: want a StageName (%v)", id, err)
		}
		stages = append(stages, st.StageName)
	}
	if len(stages) > 1 {
		return "", fmt.Errorf("the template has REST API stages %v: this stack serves one", stages)
	}
	if len(stages) == 0 {
		return "", nil
	}
	return stages[0], nil
}

// restRoot is what Fn::GetAtt <RestApi>.RootResourceId resolves to.
const restRoot = "rest-api-root"

// hideConditions renames each resource's Condition to StackCondition in
// the template raw (as JSON): goformation's processor, told to evaluate
// conditions, would otherwise replace the whole resource with the
// condition's value.
func hideConditions(raw []byte) []byte {
	var doc map[string]any
	if json.Unmarshal(raw, &doc) != nil {
		return raw // ProcessJSON reports it
	}
	resources, _ := doc["Resources"].(map[string]any)
	for _, res := range resources {
		if m, ok := res.(map[string]any); ok {
			if c, ok := m["Condition"]; ok {
				m["StackCondition"] = c
				delete(m, "Condition")
			}
		}
	}
	out, _ := json.Marshal(doc)
	return out
}

// functionProps are the properties of an AWS::Serverless::Function this stack reads.
type functionProps struct {
	FunctionName string
	Timeout      int
	MemorySize   int
	Environment  struct{ Variables map[string]*string }
	// LoggingConfig is Lambda's: LogFormat JSON makes Lambda pass the
	// format and level to the runtime.
	LoggingConfig struct{ LogFormat, ApplicationLogLevel string }
	Events        map[string]struct {
		Type       string
		Properties struct {
			Method, Path, PayloadFormatVersion string
			Bucket                             string
			Events                             []string
			Filter                             struct {
				S3Key struct {
					Rules []struct{ Name, Value string }
				}
			}
		}
	}
}

func (p functionProps) function(id string, globals functionProps, r *resolver, secrets map[string]string) (*Function, error) {
	f := &Function{
		LogicalID: id, Name: r.functionName(id), Timeout: cmp.Or(p.Timeout, globals.Timeout, 3),
		MemoryMB: cmp.Or(p.MemorySize, globals.MemorySize, 128), Env: map[string]string{},
		LogFormat: cmp.Or(p.LoggingConfig.LogFormat, globals.LoggingConfig.LogFormat),
		LogLevel:  cmp.Or(p.LoggingConfig.ApplicationLogLevel, globals.LoggingConfig.ApplicationLogLevel),
	}
	f.ARN = r.arn("lambda", "function:"+f.Name)
	for k, v := range p.Environment.Variables {
		if v == nil {
			continue // AWS::NoValue: Lambda sets no such variable
		}
		val, err := resolveDynamic(*v, secrets)
		if err != nil {
			return nil, fmt.Errorf("function %s: %s: %w", id, k, err)
		}
		if strings.Contains(val, unresolved) {
			return nil, fmt.Errorf("function %s: %s is %s: this stack has no value for that reference", id, k, val)
		}
		f.Env[k] = val
	}
	for _, name := range slices.Sorted(maps.Keys(p.Events)) {
		e := p.Events[name]
		switch e.Type {
		case "HttpApi", "Api":
			f.HTTP = append(f.HTTP, HTTPEvent{Type: e.Type, Method: e.Properties.Method, Path: e.Properties.Path, PayloadFormat: cmp.Or(e.Properties.PayloadFormatVersion, "2.0")})
		case "S3":
			ev := S3Event{Bucket: e.Properties.Bucket, Events: e.Properties.Events}
			for _, rule := range e.Properties.Filter.S3Key.Rules {
				if rule.Name == "prefix" {
					ev.Prefix = rule.Value
				}
			}
			f.S3 = append(f.S3, ev)
		default:
			return nil, fmt.Errorf("function %s: event %s: this stack does not run %s events", id, name, e.Type)
		}
	}
	return f, nil
}

// dynamicRef matches a Secrets Manager dynamic reference to a secret's string.
var dynamicRef = regexp.MustCompile(`\{\{resolve:secretsmanager:(arn:[^:]+:secretsmanager:[^:]+:[^:]+:secret:[^:}]+):SecretString(:[^}]*)?\}\}`)

// resolveDynamic replaces the dynamic references in v to the secrets the
// template generates with their generated values; CloudFormation resolves
// them when it deploys.
func resolveDynamic(v string, secrets map[string]string) (string, error) {
	var err error
	out := dynamicRef.ReplaceAllStringFunc(v, func(m string) string {
		arn := dynamicRef.FindStringSubmatch(m)[1]
		s, ok := secrets[arn]
		if !ok {
			err = fmt.Errorf("%s names a secret the template does not generate", m)
		}
		return s
	})
	if err == nil && strings.Contains(out, "{{resolve:") {
		err = fmt.Errorf("%s: this stack resolves only the template's own Secrets Manager secrets", v)
	}
	return out, err
}

// resolver answers Ref, Fn::GetAtt and Fn::Sub for a [Site].
type resolver struct {
	site   Site
	opts   *intrinsics.ProcessorOptions
	params map[string]any            // the template's Parameters section
	types  map[string]string         // logical id -> resource type
	props  map[string]map[string]any // logical id -> properties, unresolved
	seen   map[string]string         // what a resource reference resolved to
}

// pseudo returns the value of a pseudo parameter.
func (r *resolver) pseudo(name string) (string, bool) {
	switch name {
	case "AWS::StackName":
		return r.site.StackName, true
	case "AWS::Region":
		return r.site.Region, true
	case "AWS::AccountId":
		return r.site.Account, true
	case "AWS::Partition":
		return "aws", true
	case "AWS::URLSuffix":
		return "amazonaws.com", true
	case "AWS::StackId":
		return r.site.StackID(), true
	}
	return "", false
}

func (r *resolver) ref(in, tmpl any) any {
	name, _ := in.(string)
	if name == "AWS::NoValue" {
		return nil
	}
	if v, ok := r.pseudo(name); ok {
		return v
	}
	if _, ok := r.types[name]; ok {
		return r.refOf(name)
	}
	if v, ok := r.site.Parameters[name]; ok {
		return v
	}
	return intrinsics.Ref("Ref", in, tmpl) // a parameter's default
}

// refOf returns what Ref of the resource id is here.
func (r *resolver) refOf(id string) string {
	switch r.types[id] {
	case "AWS::Serverless::Function":
		return r.functionName(id)
	case "AWS::DynamoDB::Table":
		return r.note(id, r.name(id, "TableName"))
	case "AWS::S3::Bucket":
		return r.note(id, strings.ToLower(r.name(id, "BucketName")))
	case "AWS::Serverless::StateMachine":
		return r.note(id, r.arn("states", "stateMachine:"+r.name(id, "Name")))
	case "AWS::SecretsManager::Secret":
		return r.note(id, r.arn("secretsmanager", "secret:"+r.name(id, "Name")+"-AbCdEf"))
	case "AWS::KMS::Key":
		_, keyID, _ := strings.Cut(r.keyArn(id), ":key/")
		return keyID
	case "AWS::Logs::LogGroup":
		return r.name(id, "LogGroupName")
	case "AWS::Serverless::HttpApi", "AWS::ApiGatewayV2::Api", "AWS::ApiGateway::RestApi":
		return "local"
	case "AWS::ApiGatewayV2::Integration", "AWS::ApiGateway::Resource":
		return id // what routes and methods name it by
	}
	return unresolved + "Ref " + id + ">"
}

// getAtt answers X.Arn for the resources this stack has, and their roles.
func (r *resolver) getAtt(in any) any {
	var parts []string
	switch v := in.(type) {
	case string:
		parts = strings.SplitN(v, ".", 2)
	case []any:
		for _, p := range v {
			s, _ := p.(string)
			parts = append(parts, s)
		}
	}
	if len(parts) == 2 && parts[1] == "RootResourceId" && r.types[parts[0]] == "AWS::ApiGateway::RestApi" {
		return restRoot
	}
	if len(parts) == 2 && strings.HasPrefix(r.types[parts[0]], "Custom::") {
		if v, ok := r.site.Custom[parts[0]][parts[1]]; ok {
			return r.note(parts[0]+"."+parts[1], v)
		}
		return "pending " + parts[0] + "." + parts[1]
	}
	if len(parts) != 2 || parts[1] != "Arn" {
		return unresolved + "Fn::GetAtt " + strings.Join(parts, ".") + ">"
	}
	id := parts[0]
	switch r.types[id] {
	case "AWS::Serverless::Function":
		return r.arn("lambda", "function:"+r.functionName(id))
	case "AWS::DynamoDB::Table":
		return r.arn("dynamodb", "table/"+r.refOf(id))
	case "AWS::S3::Bucket":
		return "arn:aws:s3:::" + r.refOf(id)
	case "AWS::IAM::Role":
		return "arn:aws:iam::" + r.site.Account + ":role/" + r.name(id, "RoleName")
	case "AWS::Logs::LogGroup":
		return r.arn("logs", "log-group:"+r.refOf(id)+":*")
	case "AWS::KMS::Key":
		return r.keyArn(id)
	}
	// SAM's implicit role of a function: <FunctionLogicalID>Role.
	if fn, ok := strings.CutSuffix(id, "Role"); ok && r.types[fn] == "AWS::Serverless::Function" {
		return "arn:aws:iam::" + r.site.Account + ":role/" + r.generated(id)
	}
	return unresolved + "Fn::GetAtt " + id + ".Arn>"
}

// subVar matches ${Name}, ${Name.Attribute} and the literal ${!...}.
var subVar = regexp.MustCompile(`\$\{(!?)([^}]*)\}`)

func (r *resolver) sub(in, tmpl any) any {
	var s string
	vars := map[string]any{}
	switch v := in.(type) {
	case string:
		s = v
	case []any:
		if len(v) != 2 {
			return nil
		}
		s, _ = v[0].(string)
		vars, _ = v[1].(map[string]any)
	}
	return subVar.ReplaceAllStringFunc(s, func(m string) string {
		g := subVar.FindStringSubmatch(m)
		if g[1] == "!" {
			return "${" + g[2] + "}"
		}
		if v, ok := vars[g[2]]; ok {
			return fmt.Sprint(v)
		}
		var v any
		if strings.Contains(g[2], ".") {
			v = r.getAtt(g[2])
		} else {
			v = r.ref(g[2], tmpl)
		}
		if v == nil {
			return ""
		}
		return fmt.Sprint(v)
	})
}

// split answers Fn::Split as a list Fn::Select can take (goformation's
// gives a []string, which its Fn::Select does not index).
func split(in any) any {
	args, _ := in.([]any)
	if len(args) != 2 {
		return nil
	}
	delim, _ := args[0].(string)
	s, _ := args[1].(string)
	var out []any
	for _, part := range strings.Split(s, delim) {
		out = append(out, part)
	}
	return out
}

// name returns the resource's name property, resolved, or the name
// CloudFormation generates when it has none: <stack>-<id>-<suffix>.
func (r *resolver) name(id, prop string) string {
	v, ok := r.props[id][prop]
	if !ok {
		return r.generated(id)
	}
	doc, _ := json.Marshal(map[string]any{"Parameters": r.params, "Value": v})
	out, err := intrinsics.ProcessJSON(doc, r.opts)
	var got struct{ Value string }
	if err != nil || json.Unmarshal(out, &got) != nil || got.Value == "" {
		return unresolved + id + "." + prop + ">"
	}
	return got.Value
}

func (r *resolver) generated(id string) string {
	return r.site.StackName + "-" + id + "-" + strings.ToUpper(r.site.Suffix)
}

func (r *resolver) functionName(id string) string { return r.name(id, "FunctionName") }

func (r *resolver) arn(service, resource string) string {
	return "arn:aws:" + service + ":" + r.site.Region + ":" + r.site.Account + ":" + resource
}

// keyArn returns the ARN of the local KMS's key for the template's key id.
func (r *resolver) keyArn(id string) string {
	if v, ok := r.site.Keys[id]; ok {
		return r.note(id, v)
	}
	return r.arn("kms", "key/pending")
}

// note records what a resource reference resolved to, for [Template.Substituted].
func (r *resolver) note(what, v string) string {
	r.seen[what] = v
	return v
}

// alphanumeric returns n random letters and digits.
func alphanumeric(n int) string {
	const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	rand.Read(b)
	for i := range b {
		b[i] = chars[int(b[i])%len(chars)]
	}
	return string(b)
}

// Command cost prices Switchboard on AWS: the cost per million calls of each
// family's representative tools, by service, with an HTTP API or a REST API
// as the front door, beside AgentCore Gateway's published price for its
// gateway alone; and what the template costs at idle.
//
//	go run ./scripts/cost [--measured scripts/cost/measured.json] [--template template.yaml]
//
// The usage per call (functions invoked and their billed durations,
// DynamoDB request units, S3 requests, Step Functions executions, KMS
// requests) comes from the file that
//
//	go run ./scripts/stack --measure scripts/cost/measured.json
//
// writes: the deployed topology run whole on this machine, every function
// billed from the Lambda Runtime API's hand-out to its answer, DynamoDB's
// units as DynamoDB Local reports them. Memory sizes come from the catalog
// (the gateway's from shared/deploy), the prices from the constants below
// (us-east-1, on-demand, no free tier).
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/awslabs/goformation/v7/intrinsics"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/deploy"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/keyring"
)

// Prices in US dollars, us-east-1, read on 2026-11-26 from the pages named
// (stored copies of them, through the search tool's pages corpus, where the
// page itself is rendered by script).
const (
	// https://aws.amazon.com/api-gateway/pricing/: HTTP APIs, first 300
	// million requests a month (of up to 512 KB each).
	HTTPAPIPerMillion = 1.00
	// Same page: REST APIs, first 333 million requests a month. A REST API
	// streaming a Lambda proxy response bills the request the same; the
	// streamed bytes past a response's first 6 MB bill on Lambda's side.
	RESTAPIPerMillion = 3.50
	// https://aws.amazon.com/lambda/pricing/: requests, and duration on
	// Arm (the template's architecture), first 7.5 billion GB-seconds a month.
	LambdaPerMillionRequests = 0.20
	LambdaArmPerGBSecond     = 0.0000133334
	// https://aws.amazon.com/dynamodb/pricing/on-demand/: Standard table
	// class, per million write and read request units.
	DynamoDBPerMillionWRU = 0.625
	DynamoDBPerMillionRRU = 0.125
	// https://aws.amazon.com/s3/pricing/: S3 Standard, per 1,000 PUT, COPY,
	// POST and LIST requests, and per 1,000 GET and all other requests
	// (DELETE is free).
	S3Tier1PerThousand = 0.005
	S3Tier2PerThousand = 0.0004
	// https://aws.amazon.com/step-functions/pricing/: Express Workflows,
	// per million requests, and duration per GB-second ($0.06 per GB-hour,
	// the first 1,000 GB-hours), billed in 100 ms and 64 MB steps.
	SFNExpressPerMillion  = 1.00
	SFNExpressPerGBSecond = 0.06 / 3600
	// https://aws.amazon.com/kms/pricing/: $0.03 per 10,000 requests, and
	// $1 a month per customer managed key (each of its first two yearly
	// rotations adds $1 a month).
	KMSPerTenThousand = 0.03
	KMSKeyPerMonth    = 1.00
	// https://aws.amazon.com/secrets-manager/pricing/: per secret per month.
	SecretPerMonth = 0.40
	// https://aws.amazon.com/cloudwatch/pricing/: per standard-resolution
	// alarm metric, and per dashboard, a month (past the free tier's 10 and 3).
	AlarmPerMonth     = 0.10
	DashboardPerMonth = 3.00
	// https://aws.amazon.com/bedrock/agentcore/pricing/: Gateway, $0.005 per
	// 1,000 tool invocations (InvokeTool), for the gateway alone: its
	// targets' Lambda functions and storage bill apart.
	AgentCoreGatewayPerMillion = 5.00
	// https://aws.amazon.com/eventbridge/pricing/: Scheduler, per million
	// invocations past the first 14 million of a month, which AWS's price
	// list (AWSEvents, "$0 for the first 14 million scheduled invocations")
	// prices at $0 as a tier of the on-demand rate itself, not as a
	// time-limited free tier. An account's other schedules count toward it.
	SchedulerPerMillion      = 1.00
	SchedulerFreeInvocations = 14e6
	// https://aws.amazon.com/systems-manager/pricing/: Parameter Store
	// standard parameters and their standard throughput are free; an
	// advanced parameter is $0.05 a month (the template makes standard ones,
	// of at most 4 KB). SecureString values are encrypted with the AWS
	// managed key aws/ssm, which has no monthly fee
	// (https://aws.amazon.com/kms/pricing/: AWS managed keys).
	StandardParameterPerMonth = 0.00
)

// Measurement is what scripts/stack --measure writes (its Measurement).
type Measurement struct {
	Taken    string       `json:"taken"`
	Machine  string       `json:"machine"`
	Calls    int          `json:"calls"`
	Families []FamilyCall `json:"families"`
}

// FamilyCall is one representative call and its usage per call.
type FamilyCall struct {
	Family string `json:"family"`
	Tool   string `json:"tool"`
	Usage  Usage  `json:"usage_per_call"`
}

// Usage is scripts/stack's Usage: what one call billed.
type Usage struct {
	Invocations   map[string]float64 `json:"invocations"`
	BilledMS      map[string]float64 `json:"billed_ms"`
	ReadUnits     float64            `json:"dynamodb_read_units"`
	WriteUnits    float64            `json:"dynamodb_write_units"`
	S3Tier1       float64            `json:"s3_tier1_requests"`
	S3Tier2       float64            `json:"s3_tier2_requests"`
	Executions    float64            `json:"sfn_executions"`
	ExecutionMBMS float64            `json:"sfn_billed_mb_ms"`
	KMSRequests   float64            `json:"kms_requests"`
}

// Costs are the dollars of one million calls, by service.
type Costs struct {
	HTTPAPI, RESTAPI                 float64
	LambdaRequests, LambdaDuration   float64
	DynamoDB, S3, StepFunctions, KMS float64
}

// Behind is the cost behind the front door.
func (c Costs) Behind() float64 {
	return c.LambdaRequests + c.LambdaDuration + c.DynamoDB + c.S3 + c.StepFunctions + c.KMS
}

// Price returns the cost of a million calls using u, with memoryMB giving
// each function's memory size by its key (invoke.FunctionName of its path,
// or "gateway").
func Price(u Usage, memoryMB func(function string) (int, error)) (Costs, error) {
	const million = 1e6
	c := Costs{HTTPAPI: HTTPAPIPerMillion, RESTAPI: RESTAPIPerMillion}
	for _, fn := range slices.Sorted(maps.Keys(u.Invocations)) {
		mb, err := memoryMB(fn)
		if err != nil {
			return Costs{}, err
		}
		c.LambdaRequests += u.Invocations[fn] * LambdaPerMillionRequests
		c.LambdaDuration += million * u.BilledMS[fn] / 1000 * float64(mb) / 1024 * LambdaArmPerGBSecond
	}
	c.DynamoDB = u.ReadUnits*DynamoDBPerMillionRRU + u.WriteUnits*DynamoDBPerMillionWRU
	c.S3 = million * (u.S3Tier1*S3Tier1PerThousand + u.S3Tier2*S3Tier2PerThousand) / 1000
	c.StepFunctions = u.Executions*SFNExpressPerMillion + million*u.ExecutionMBMS/1024/1000*SFNExpressPerGBSecond
	c.KMS = million * u.KMSRequests * KMSPerTenThousand / 10000
	return c, nil
}

// catalogMemory returns each function's memory size: the catalog's, the
// gateway's from shared/deploy.
func catalogMemory(cat *catalog.Catalog) func(string) (int, error) {
	sizes := map[string]int{"gateway": deploy.GatewayLimits.MemoryMB}
	for _, f := range cat.Functions() {
		sizes[invoke.FunctionName(f.Path)] = f.Limits.MemoryMB
	}
	return func(fn string) (int, error) {
		mb, ok := sizes[fn]
		if !ok {
			return 0, fmt.Errorf("function %s is not in the catalog", fn)
		}
		return mb, nil
	}
}

func main() {
	measured := flag.String("measured", "scripts/cost/measured.json", "the `file` scripts/stack --measure wrote")
	template := flag.String("template", "template.yaml", "the SAM `template` to check for idle costs")
	flag.Parse()
	if err := run(*measured, *template, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "cost:", err)
		os.Exit(1)
	}
}

func run(measured, template string, w io.Writer) error {
	data, err := os.ReadFile(measured)
	if err != nil {
		return err
	}
	var m Measurement
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("%s: %w", measured, err)
	}
	if err := table(w, m, catalogMemory(catalog.Default())); err != nil {
		return err
	}
	tmpl, err := os.ReadFile(template)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nAt idle (%s), a month, plus storage (table, bucket, logs) by the GB-month:\n\n", template)
	var checked []string
	for _, conf := range Configurations {
		idle, err := Idle(tmpl, conf.Parameters)
		if err != nil {
			return fmt.Errorf("%s: %w", conf.Name, err)
		}
		fmt.Fprintf(w, "  $%.2f  %s: %s\n", idle.Monthly, conf.Name, fixedSummary(idle.Fixed, idle.Free))
		if checked == nil {
			checked = idle.Checked
		}
	}
	fmt.Fprintf(w, "\n  A schedule's cost is the Lambda requests it makes (within Lambda's free tier of a million a month, which this model\n"+
		"  counts for nothing): EventBridge Scheduler's first %.0f million invocations a month are $0. KeyStore=ssm keeps the key\n"+
		"  rings in standard SSM SecureString parameters, free, encrypted with aws/ssm (no monthly fee).\n", SchedulerFreeInvocations/1e6)
	fmt.Fprintf(w, "\n  checked, with the defaults: %s\n", strings.Join(checked, "; "))
	return nil
}

// fixedSummary lists fixed costs, those of the same kind and price counted
// together ("22 alarms $2.20"), then the resources priced at nothing.
func fixedSummary(fixed, free []string) string {
	if len(fixed)+len(free) == 0 {
		return "nothing"
	}
	var alarms int
	var out []string
	for _, f := range fixed {
		if strings.HasPrefix(f, "alarm ") {
			alarms++
			continue
		}
		out = append(out, f)
	}
	if alarms > 0 {
		out = append(out, fmt.Sprintf("%d alarms $%.2f", alarms, float64(alarms)*AlarmPerMonth))
	}
	return strings.Join(append(out, free...), ", ")
}

// table prints the cost per million calls of each call in m.
func table(w io.Writer, m Measurement, memoryMB func(string) (int, error)) error {
	fmt.Fprintf(w, "Cost per million calls, US dollars, us-east-1 on-demand (usage measured %s on %s, %d warm calls each, by scripts/stack --measure):\n\n", m.Taken, m.Machine, m.Calls)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "family\ttool\tLambda requests\tLambda GB-s\tDynamoDB\tS3\tStep Functions\tKMS\tbehind the front door\twith HTTP API\twith REST API\t")
	for _, f := range m.Families {
		c, err := Price(f.Usage, memoryMB)
		if err != nil {
			return fmt.Errorf("%s: %w", f.Tool, err)
		}
		fmt.Fprintf(tw, "%s\t%s\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t\n", f.Family, f.Tool, c.LambdaRequests, c.LambdaDuration,
			c.DynamoDB, c.S3, c.StepFunctions, c.KMS, c.Behind(), c.HTTPAPI+c.Behind(), c.RESTAPI+c.Behind())
	}
	fmt.Fprintf(tw, "AgentCore Gateway\tits gateway alone\t\t\t\t\t\t\t\t%.2f\t\t\n", AgentCoreGatewayPerMillion)
	return tw.Flush()
}

// IdleCost is what a deployed template costs with no calls.
type IdleCost struct {
	Monthly float64
	Fixed   []string // the resources with a monthly price
	Free    []string // the resources that could have one and have none
	Checked []string // what was checked to have none
}

// A Configuration is a set of template parameters (the rest at their
// defaults), named for the idle cost table.
type Configuration struct {
	Name       string
	Parameters map[string]string
}

// Configurations are the deployments whose idle cost run prints: the
// defaults, the cheapest, and what each option that adds a fixed cost adds.
var Configurations = []Configuration{
	{"defaults", nil},
	{"Monitoring=none", map[string]string{"Monitoring": "none"}},
	{"Monitoring=none, ConnectorKeyMode=secret", map[string]string{"Monitoring": "none", "ConnectorKeyMode": "secret"}},
	{"Monitoring=none, KeyStore=ssm", map[string]string{"Monitoring": "none", "KeyStore": "ssm"}},
	{"Monitoring=none, KeyStore=ssm, ConnectorKeyMode=secret", map[string]string{"Monitoring": "none", "KeyStore": "ssm", "ConnectorKeyMode": "secret"}},
	{"Monitoring=none, OpenAIApiKey set", map[string]string{"Monitoring": "none", "Embedder": "openai", "OpenAIApiKey": "sk-x"}},
	{"Monitoring=none, OAuth with the stack's Cognito", map[string]string{"Monitoring": "none", "OAuthResource": "https://mcp.example.com/mcp"}},
	{"Monitoring=none, KmsKeyArn set (the key bills to its owner)", map[string]string{"Monitoring": "none", "KmsKeyArn": "arn:aws:kms:us-east-1:111122223333:key/00000000-0000-0000-0000-000000000000"}},
}

// templateDoc is what Idle reads of a template.
type templateDoc struct {
	Parameters map[string]struct{ Default any }
	Conditions map[string]any
	Resources  map[string]struct {
		Type       string
		Condition  string
		Properties map[string]any
	}
}

// Idle reads a SAM template and returns its fixed monthly costs when
// deployed with params (every other parameter at its default): customer
// managed KMS keys, Secrets Manager secrets, CloudWatch alarms and
// dashboards, schedules; a resource whose condition does not hold is not
// created, so costs nothing. It fails on a function with provisioned
// concurrency, a table with provisioned throughput, a Standard state
// machine, any resource type it has no idle price for, and a parameter the
// template lacks, so that a template change that adds an idle cost cannot
// pass unpriced.
func Idle(template []byte, params map[string]string) (IdleCost, error) {
	raw, err := intrinsics.ProcessYAML(template, &intrinsics.ProcessorOptions{NoProcess: true})
	if err != nil {
		return IdleCost{}, err
	}
	var doc templateDoc
	if err := json.Unmarshal(raw, &doc); err != nil {
		return IdleCost{}, err
	}
	values := map[string]string{}
	for name, p := range doc.Parameters {
		values[name] = fmt.Sprint(p.Default)
		if p.Default == nil {
			values[name] = ""
		}
	}
	for name, v := range params {
		if _, ok := doc.Parameters[name]; !ok {
			return IdleCost{}, fmt.Errorf("the template has no parameter %s", name)
		}
		values[name] = v
	}
	var c IdleCost
	var errs []error
	counts := map[string]int{}
	for _, id := range slices.Sorted(maps.Keys(doc.Resources)) {
		r := doc.Resources[id]
		if r.Condition != "" {
			created, err := condition(doc.Conditions, values, r.Condition, 0)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", id, err))
				continue
			}
			if !created {
				continue
			}
		}
		counts[r.Type]++
		switch r.Type {
		case "AWS::KMS::Key":
			c.Monthly += KMSKeyPerMonth
			c.Fixed = append(c.Fixed, fmt.Sprintf("KMS key %s $%.2f", id, KMSKeyPerMonth))
		case "AWS::SecretsManager::Secret":
			c.Monthly += SecretPerMonth
			c.Fixed = append(c.Fixed, fmt.Sprintf("secret %s $%.2f", id, SecretPerMonth))
		case "AWS::Serverless::Function":
			if _, ok := r.Properties["ProvisionedConcurrencyConfig"]; ok {
				errs = append(errs, fmt.Errorf("%s has provisioned concurrency", id))
			}
		case "AWS::DynamoDB::Table":
			if r.Properties["BillingMode"] != "PAY_PER_REQUEST" {
				errs = append(errs, fmt.Errorf("%s is not on-demand (BillingMode %v)", id, r.Properties["BillingMode"]))
			}
		case "AWS::Serverless::StateMachine":
			if r.Properties["Type"] != "EXPRESS" {
				errs = append(errs, fmt.Errorf("%s is not an Express state machine", id))
			}
		case "AWS::CloudWatch::Alarm":
			c.Monthly += AlarmPerMonth
			c.Fixed = append(c.Fixed, fmt.Sprintf("alarm %s $%.2f", id, AlarmPerMonth))
		case "AWS::Scheduler::Schedule":
			monthly, err := scheduleMonthly(r.Properties["ScheduleExpression"])
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", id, err))
				break
			}
			c.Monthly += monthly
			c.Fixed = append(c.Fixed, fmt.Sprintf("schedule %s $%.4f", id, monthly))
		case keyring.ResourceType:
			// A key ring in a standard SSM SecureString parameter (package
			// keyring), whose function runs only when the stack is deployed.
			c.Monthly += StandardParameterPerMonth
			c.Free = append(c.Free, fmt.Sprintf("SSM parameter of %s $%.2f", id, StandardParameterPerMonth))
		case "AWS::CloudWatch::Dashboard":
			c.Monthly += DashboardPerMonth
			c.Fixed = append(c.Fixed, fmt.Sprintf("dashboard %s $%.2f", id, DashboardPerMonth))
		case "AWS::Serverless::HttpApi", "AWS::Serverless::Api", "AWS::ApiGatewayV2::Api", "AWS::ApiGatewayV2::Route",
			"AWS::ApiGatewayV2::Integration", "AWS::ApiGatewayV2::Stage", "AWS::ApiGatewayV2::DomainName", "AWS::ApiGatewayV2::ApiMapping",
			"AWS::ApiGateway::RestApi", "AWS::ApiGateway::Resource", "AWS::ApiGateway::Method", "AWS::ApiGateway::Deployment",
			"AWS::ApiGateway::Stage", "AWS::ApiGateway::DomainName", "AWS::ApiGateway::BasePathMapping",
			"AWS::S3::Bucket", "AWS::S3::BucketPolicy", "AWS::Logs::LogGroup",
			"AWS::IAM::Role", "AWS::IAM::ManagedPolicy", "AWS::IAM::Policy", "AWS::Lambda::Permission",
			"AWS::SQS::Queue", "AWS::SNS::Topic", "AWS::ApiGateway::Account",
			"AWS::Cognito::UserPool", "AWS::Cognito::UserPoolDomain", "AWS::Cognito::UserPoolClient":
			// Billed by use or by the GB stored only.
		default:
			errs = append(errs, fmt.Errorf("%s: this model has no idle price for %s", id, r.Type))
		}
	}
	for _, t := range slices.Sorted(maps.Keys(counts)) {
		c.Checked = append(c.Checked, fmt.Sprintf("%d %s", counts[t], t))
	}
	c.Checked = []string{"resources: " + strings.Join(c.Checked, ", ") + "; no provisioned concurrency, an on-demand table, Express state machines"}
	return c, errors.Join(errs...)
}

// condition evaluates the template's condition name with the parameters'
// values: Fn::Equals, Fn::Not, Fn::And, Fn::Or, Condition and Ref of a
// parameter, what template conditions may use.
func condition(conds map[string]any, values map[string]string, name string, depth int) (bool, error) {
	c, ok := conds[name]
	if !ok || depth > len(conds) {
		return false, fmt.Errorf("condition %s is not defined, or refers to itself", name)
	}
	return evalCondition(conds, values, c, depth+1)
}

func evalCondition(conds map[string]any, values map[string]string, v any, depth int) (bool, error) {
	if name, ok := v.(string); ok { // goformation reads !Condition NAME as NAME
		return condition(conds, values, name, depth)
	}
	m, ok := v.(map[string]any)
	if !ok || len(m) != 1 {
		return false, fmt.Errorf("this model cannot evaluate the condition %v", v)
	}
	for fn, arg := range m {
		if fn == "Condition" {
			name, _ := arg.(string)
			return condition(conds, values, name, depth)
		}
		args, _ := arg.([]any)
		switch fn {
		case "Fn::Equals":
			if len(args) != 2 {
				break
			}
			a, errA := conditionValue(values, args[0])
			b, errB := conditionValue(values, args[1])
			return a == b, errors.Join(errA, errB)
		case "Fn::Not", "Fn::And", "Fn::Or":
			all, some := true, false
			for _, a := range args {
				ok, err := evalCondition(conds, values, a, depth)
				if err != nil {
					return false, err
				}
				all, some = all && ok, some || ok
			}
			switch {
			case fn == "Fn::Not" && len(args) == 1:
				return !all, nil
			case fn == "Fn::And" && len(args) > 0:
				return all, nil
			case fn == "Fn::Or" && len(args) > 0:
				return some, nil
			}
		}
	}
	return false, fmt.Errorf("this model cannot evaluate the condition %v", v)
}

// conditionValue is a Fn::Equals operand: a literal, or Ref of a parameter.
func conditionValue(values map[string]string, v any) (string, error) {
	if m, ok := v.(map[string]any); ok {
		name, _ := m["Ref"].(string)
		value, ok := values[name]
		if len(m) != 1 || !ok {
			return "", fmt.Errorf("this model cannot evaluate the operand %v", v)
		}
		return value, nil
	}
	return fmt.Sprint(v), nil
}

// scheduleMonthly prices a rate schedule's invocations for a month of 30
// days: the Lambda requests it makes, the scheduler's own invocations being
// $0 below [SchedulerFreeInvocations] a month (the function's duration is
// left out: a sweep that finds nothing due takes milliseconds).
func scheduleMonthly(expr any) (float64, error) {
	var n int
	var unit string
	if s, ok := expr.(string); !ok || !rateExpr(s, &n, &unit) {
		return 0, fmt.Errorf("this model prices only rate(...) schedules, not %v", expr)
	}
	minutes := map[string]int{"minute": 1, "minutes": 1, "hour": 60, "hours": 60, "day": 1440, "days": 1440}[unit]
	if minutes == 0 || n <= 0 {
		return 0, fmt.Errorf("this model cannot read the schedule %v", expr)
	}
	runs := float64(30*24*60) / float64(n*minutes)
	scheduler := max(0, runs-SchedulerFreeInvocations) * SchedulerPerMillion
	return (scheduler + runs*LambdaPerMillionRequests) / 1e6, nil
}

func rateExpr(s string, n *int, unit *string) bool {
	k, err := fmt.Sscanf(strings.TrimSuffix(strings.TrimPrefix(s, "rate("), ")"), "%d %s", n, unit)
	return err == nil && k == 2 && strings.HasPrefix(s, "rate(")
}

package deploy

import (
	"bytes"
	"encoding/json"

	"github.com/aws/aws-lambda-go/events"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/infra"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/rag"
	"github.com/switchboard-dev/switchboard/shared/statemachine"
)

func ifv(cond string, then, otherwise any) any {
	return map[string]any{"Fn::If": []any{cond, then, otherwise}}
}

var noValue = ref("AWS::NoValue")

// The bucket's name and ARNs as the functions an S3 event invokes name them.
var (
	stackUUIDRaw  = map[string]any{"Id": map[string]any{"Fn::Select": []any{float64(2), map[string]any{"Fn::Split": []any{"/", ref("AWS::StackId")}}}}}
	bucketNameRaw = map[string]any{"Fn::Sub": []any{"switchboard-${Id}", stackUUIDRaw}}
	bucketArnRaw  = map[string]any{"Fn::Sub": []any{"arn:${AWS::Partition}:s3:::switchboard-${Id}", stackUUIDRaw}}
	bucketObjsRaw = map[string]any{"Fn::Sub": []any{"arn:${AWS::Partition}:s3:::switchboard-${Id}/*", stackUUIDRaw}}
)

// ragCatalog is the default catalog with stand-ins for the entries the rag
// and vector families add: the three pipeline steps, a tool that runs the
// pipeline, and the indexer that S3 uploads invoke.
func ragCatalog(t *testing.T, steps ...string) *catalog.Catalog {
	t.Helper()
	tool := func(name, function string, set func(*catalog.Tool)) *catalog.Tool {
		tl := &catalog.Tool{
			Name: name, Title: name, Description: "A stand-in.", Family: strings.Split(function, "/")[0], Function: function,
			InputSchema: objectSchema, OutputSchema: objectSchema,
			Visibility: catalog.Internal, Limits: catalog.Limits{Timeout: 10 * time.Second, MemoryMB: 512}, Table: catalog.Read,
		}
		set(tl)
		return tl
	}
	all := map[string]*catalog.Tool{
		"vector/rephrase": tool("optimizer_vs-rephrase", "vector/rephrase", func(t *catalog.Tool) {
			t.Generates, t.PipelineTask = true, "RephraseFunctionArn"
		}),
		"vector/retriever": tool("optimizer_vs-retriever", "vector/retriever", func(t *catalog.Tool) {
			t.Embeds, t.Blobs, t.PipelineTask = true, catalog.Read, "RetrieverFunctionArn"
		}),
		"vector/grade": tool("optimizer_vs-grade", "vector/grade", func(t *catalog.Tool) {
			t.Generates, t.PipelineTask = true, "GradeFunctionArn"
		}),
	}
	// The default catalog's own steps and rag_basic, once their families exist,
	// give way to the stand-ins, so that each case has exactly the steps it names.
	var tools []*catalog.Tool
	for _, tl := range catalog.Default().Tools() {
		if _, stand := all[tl.Function]; !stand && tl.Name != "rag_basic" {
			tools = append(tools, tl)
		}
	}
	for _, s := range steps {
		tools = append(tools, all[s])
	}
	tools = append(tools, tool("rag_basic", "rag/basic", func(t *catalog.Tool) {
		t.Pipeline, t.Generates, t.Visibility = true, true, catalog.Public
		t.Limits = catalog.Limits{Timeout: 30 * time.Second, MemoryMB: 512, ReservedConcurrency: 5}
	}))
	cat, err := catalog.New(tools, catalog.Default().Resources(), catalog.Default().Prompts())
	if err != nil {
		t.Fatal(err)
	}
	cat, err = cat.WithTriggers(&catalog.Trigger{
		Function: "vector/indexer", Family: "vector", Description: "indexes documents uploaded under tenants/<tenant>/documents/<store>/.",
		Limits: catalog.Limits{Timeout: 5 * time.Minute, MemoryMB: 1024}, Table: catalog.ReadWrite, Blobs: catalog.Read, Embeds: true,
		S3: &catalog.S3Events{Events: []string{"s3:ObjectCreated:*", "s3:ObjectRemoved:*"}, Prefix: "tenants/"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

func renderRag(t *testing.T) (parsed, *catalog.Catalog) {
	t.Helper()
	cat := ragCatalog(t, "vector/rephrase", "vector/retriever", "vector/grade")
	data, err := Template(cat)
	if err != nil {
		t.Fatal(err)
	}
	return parseTemplate(t, data), cat
}

func TestThePipelineStateMachineIsExpressAndInvokesExactlyItsSteps(t *testing.T) {
	p, cat := renderRag(t)
	tasks := cat.PipelineTasks()
	sm, err := p.typed.GetServerlessStateMachineWithName(PipelineLogicalID)
	if err != nil {
		t.Fatalf("goformation sees no state machine %s: %v", PipelineLogicalID, err)
	}
	if deref(sm.Type) != "EXPRESS" || sm.DefinitionUri == nil || deref(sm.DefinitionUri.String) != infra.RAGPipelineFile {
		t.Errorf("state machine of type %q from %v, want EXPRESS from %s", deref(sm.Type), sm.DefinitionUri, infra.RAGPipelineFile)
	}
	raw := props(p.resource(t, PipelineLogicalID))
	wantSubs := map[string]any{}
	var steps []any
	for _, name := range statemachine.Substitutions(infra.RAGPipeline) {
		i := slices.IndexFunc(tasks, func(task catalog.PipelineTask) bool { return task.Substitution == name })
		if i < 0 {
			t.Fatalf("the definition uses ${%s}, which no pipeline task of the catalog fills", name)
		}
		wantSubs[name] = getAtt(invoke.LogicalID(tasks[i].Function) + ".Arn")
	}
	for _, task := range tasks {
		steps = append(steps, getAtt(invoke.LogicalID(task.Function)+".Arn"))
	}
	if diff := cmp.Diff(wantSubs, raw["DefinitionSubstitutions"]); diff != "" {
		t.Errorf("DefinitionSubstitutions mismatch (-want +got):\n%s", diff)
	}
	statements := raw["Policies"].([]any)[0].(map[string]any)["Statement"].([]any)
	invoke := statements[0].(map[string]any)
	want := map[string]any{"Sid": "InvokeSteps", "Effect": "Allow", "Action": strs("lambda:InvokeFunction"), "Resource": steps}
	if diff := cmp.Diff(want, invoke); diff != "" {
		t.Errorf("the state machine's invoke statement mismatch (-want +got):\n%s", diff)
	}
	for _, st := range statements[1:] {
		for _, a := range st.(map[string]any)["Action"].([]any) {
			// Its logs, and its traces (TestEveryFunctionAndTheStateMachineAreTraced).
			if !strings.HasPrefix(a.(string), "logs:") && !strings.HasPrefix(a.(string), "xray:") {
				t.Errorf("the state machine may also %s", a)
			}
		}
	}
	logging := raw["Logging"].(map[string]any)
	dest := logging["Destinations"].([]any)[0].(map[string]any)["CloudWatchLogsLogGroup"].(map[string]any)["LogGroupArn"]
	if !cmp.Equal(dest, getAtt(pipelineLogGroupID+".Arn")) || logging["IncludeExecutionData"] != false {
		t.Errorf("logging %v, want the stack's log group without execution data", logging)
	}
	lg := props(p.resource(t, pipelineLogGroupID))
	if !cmp.Equal(lg["RetentionInDays"], ref("LogRetentionDays")) {
		t.Errorf("the state machine's log group keeps logs %v, want LogRetentionDays", lg["RetentionInDays"])
	}
}

func TestOnlyPipelineFunctionsMayStartTheStateMachine(t *testing.T) {
	p, cat := renderRag(t)
	for _, f := range Functions(cat) {
		t.Run(f.Path, func(t *testing.T) {
			got := props(p.resource(t, f.LogicalID))
			env := got["Environment"].(map[string]any)["Variables"].(map[string]any)
			var actions []string
			var resources []any
			pol, _ := got["Policies"].([]any)
			for _, doc := range pol {
				statements, _ := doc.(map[string]any)["Statement"].([]any) // the unconditional policy; the others are Fn::If
				for _, st := range statements {
					m, ok := st.(map[string]any)
					if !ok || m["Sid"] != "RunPipeline" {
						continue
					}
					for _, a := range m["Action"].([]any) {
						actions = append(actions, a.(string))
					}
					resources = m["Resource"].([]any)
				}
			}
			if f.Pipeline {
				if !cmp.Equal(env[config.EnvPipelineARN], ref(PipelineLogicalID)) {
					t.Errorf("%s = %v, want the state machine's ARN", config.EnvPipelineARN, env[config.EnvPipelineARN])
				}
				if !cmp.Equal(actions, []string{"states:StartSyncExecution"}) || !cmp.Equal(resources, []any{ref(PipelineLogicalID)}) {
					t.Errorf("may %v on %v, want states:StartSyncExecution on the state machine alone", actions, resources)
				}
				// The RAG pipelines have seed 002's limits; the chat, which runs the
				// pipeline once a turn among other calls, its own.
				if strings.HasPrefix(f.Path, "rag/") && (got["ReservedConcurrentExecutions"] != float64(5) || got["Timeout"] != float64(30)) {
					t.Errorf("reserved concurrency %v and timeout %v, want the catalog's 5 and 30", got["ReservedConcurrentExecutions"], got["Timeout"])
				}
				return
			}
			if _, ok := env[config.EnvPipelineARN]; ok || actions != nil {
				t.Errorf("a function that does not run the pipeline has %s or may start it", config.EnvPipelineARN)
			}
		})
	}
}

func TestTheIndexerRunsOnUploadsAndNamesTheBucketWithoutAReference(t *testing.T) {
	p, cat := renderRag(t)
	id := invoke.LogicalID("vector/indexer")
	f, err := p.typed.GetServerlessFunctionWithName(id)
	if err != nil {
		t.Fatal(err)
	}
	ev, ok := f.Events["BucketObjects"]
	if !ok || ev.Type != "S3" || ev.Properties.S3Event == nil {
		t.Fatalf("events %v, want an S3 event BucketObjects", f.Events)
	}
	raw := props(p.resource(t, id))
	wantEvent := map[string]any{"Type": "S3", "Properties": map[string]any{
		"Bucket": ref("Bucket"), "Events": strs("s3:ObjectCreated:*", "s3:ObjectRemoved:*"),
		"Filter": map[string]any{"S3Key": map[string]any{"Rules": []any{map[string]any{"Name": "prefix", "Value": "tenants/"}}}},
	}}
	if diff := cmp.Diff(wantEvent, raw["Events"].(map[string]any)["BucketObjects"]); diff != "" {
		t.Errorf("S3 event mismatch (-want +got):\n%s", diff)
	}
	for _, fn := range cat.Functions() {
		if fn.Path == "vector/indexer" {
			want := wantToolFunction(fn)
			if diff := cmp.Diff(want, only(raw, want)); diff != "" {
				t.Errorf("indexer mismatch (-want +got):\n%s", diff)
			}
		}
	}
	// Anything but the event naming the bucket makes a dependency cycle.
	delete(raw, "Events")
	if s := jsonText(t, raw); strings.Contains(s, `"Bucket"`) || strings.Contains(s, "Bucket.") || strings.Contains(s, "${Bucket") {
		t.Errorf("the indexer's properties refer to the bucket resource, a cycle through its notification: %s", s)
	}
	if got := props(p.resource(t, "Bucket"))["BucketName"]; !cmp.Equal(got, bucketNameRaw) {
		t.Errorf("BucketName = %v, want %v", got, bucketNameRaw)
	}
	gw := jsonText(t, props(p.resource(t, invoke.LogicalID(GatewayPath)))["Policies"])
	if strings.Contains(gw, invoke.FunctionName("vector/indexer")) {
		t.Errorf("the gateway may invoke the indexer, which no tool call reaches")
	}
}

func TestBedrockIsGrantedOnlyToFunctionsThatEmbedOrGenerate(t *testing.T) {
	p, cat := renderRag(t)
	for _, f := range Functions(cat) {
		t.Run(f.Path, func(t *testing.T) {
			got := props(p.resource(t, f.LogicalID))
			text := jsonText(t, got["Policies"])
			if has := strings.Contains(text, "bedrock:"); has != (f.Embeds || f.Generates) {
				t.Errorf("bedrock actions in its policy: %v; it embeds %v, generates %v", has, f.Embeds, f.Generates)
			}
			if f.Trigger != nil || f.Path == GatewayPath {
				return
			}
			want := wantToolFunction(catalogFunction(t, cat, f.Path))
			if diff := cmp.Diff(want, only(got, want)); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
	params := p.raw["Parameters"].(map[string]any)
	for _, name := range []string{"Embedder", "Generator"} {
		if got := params[name].(map[string]any)["Default"]; got != "offline" {
			t.Errorf("%s defaults to %v, want offline: no model access unless asked for", name, got)
		}
	}
	if params["OpenAIApiKey"].(map[string]any)["NoEcho"] != true {
		t.Errorf("OpenAIApiKey is echoed")
	}
}

// Streaming a model's reply (Bedrock's ConverseStream) is the chat's
// alone: the functions that only report progress, such as ingestion, may
// not call it.
func TestOnlyTheChatMayStreamAModelsReply(t *testing.T) {
	p := readTemplate(t)
	for _, f := range Functions(catalog.Default()) {
		text := jsonText(t, props(p.resource(t, f.LogicalID))["Policies"])
		got := strings.Contains(text, "bedrock:InvokeModelWithResponseStream")
		if want := f.Path == "chat/chat"; got != want {
			t.Errorf("%s may call bedrock:InvokeModelWithResponseStream: %v, want %v", f.Path, got, want)
		}
	}
}

func catalogFunction(t *testing.T, cat *catalog.Catalog, path string) catalog.Function {
	t.Helper()
	for _, f := range cat.Functions() {
		if f.Path == path {
			return f
		}
	}
	t.Fatalf("no function %s", path)
	return catalog.Function{}
}

func TestThePipelineNeedsAllItsStepsOrNone(t *testing.T) {
	if _, err := Template(ragCatalog(t, "vector/rephrase", "vector/grade")); err == nil || !strings.Contains(err.Error(), "RetrieverFunctionArn") {
		t.Errorf("Template without the retriever: %v, want an error naming its substitution", err)
	}
	if _, err := Template(ragCatalog(t)); err == nil {
		t.Errorf("Template with rag_basic but no steps: no error")
	}
	p := readTemplate(t)
	hasSteps := true
	for _, step := range []string{"optimizer_vs-rephrase", "optimizer_vs-retriever", "optimizer_vs-grade"} {
		_, ok := catalog.Default().Tool(step)
		hasSteps = hasSteps && ok
	}
	if _, ok := p.raw["Resources"].(map[string]any)[PipelineLogicalID]; ok != hasSteps {
		t.Errorf("template.yaml has the state machine: %v; the catalog has its steps: %v", ok, hasSteps)
	}
}

func TestATriggerHasASampleS3EventInTheShapeS3Delivers(t *testing.T) {
	evs, err := Events(ragCatalog(t, "vector/rephrase", "vector/retriever", "vector/grade"))
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(evs, func(e Event) bool { return e.Function == "vector/indexer" })
	if i < 0 {
		t.Fatalf("no sample event for vector/indexer")
	}
	ev := evs[i]
	if ev.Path != "events/vector/indexer.json" || ev.Method != MethodS3 {
		t.Errorf("event %s with method %s, want events/vector/indexer.json, %s", ev.Path, ev.Method, MethodS3)
	}
	dec := json.NewDecoder(bytes.NewReader(ev.Payload))
	dec.DisallowUnknownFields()
	var e events.S3Event
	if err := dec.Decode(&e); err != nil {
		t.Fatalf("not an events.S3Event: %v", err)
	}
	if r := e.Records[0]; r.EventName != "ObjectCreated:Put" || r.S3.Object.Key != SampleS3Key || !strings.HasPrefix(r.S3.Object.Key, "tenants/"+SampleTenant+"/documents/") {
		t.Errorf("record %+v, want an upload of %s", r, SampleS3Key)
	}
}

// TestThePipelineGivesUpBeforeItsCallersDo checks that the state machine's
// worst case (every Task using its whole TimeoutSeconds on every attempt its
// retriers allow, plus their waits) fits inside its own TimeoutSeconds, and
// that this fits what every function running the pipeline waits for a run:
// its timeout, less rag's margin before the deadline and the time it keeps
// for the answer. So a slow step degrades rather than the execution timing
// out, and an execution ends before its caller stops waiting for it.
func TestThePipelineGivesUpBeforeItsCallersDo(t *testing.T) {
	m, err := statemachine.Parse(infra.RAGPipeline)
	if err != nil {
		t.Fatal(err)
	}
	worst, err := m.WorstCase()
	if err != nil {
		t.Fatal(err)
	}
	if m.Timeout() == 0 || worst > m.Timeout() {
		t.Errorf("the steps may take %v, retries included, but the state machine times out after %v", worst, m.Timeout())
	}
	for _, cat := range []*catalog.Catalog{catalog.Default(), ragCatalog(t, "vector/rephrase", "vector/retriever", "vector/grade")} {
		for _, f := range cat.Functions() {
			if !f.Pipeline {
				continue
			}
			if waits := f.Limits.Timeout - rag.DeadlineMargin - rag.AnswerReserve; m.Timeout() > waits {
				t.Errorf("the state machine may run %v, but %s, which runs it, waits %v (its %v timeout less %v margin and %v for the answer)",
					m.Timeout(), f.Path, waits, f.Limits.Timeout, rag.DeadlineMargin, rag.AnswerReserve)
			}
		}
	}
}

// objectSchema is the schema of the test tools, which take and return any object.
var objectSchema = json.RawMessage(`{"type":"object"}`)

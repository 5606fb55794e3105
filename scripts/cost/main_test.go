package main

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/switchboard-dev/switchboard/shared/catalog"
)

func TestPriceAddsEachServiceOfAMillionCalls(t *testing.T) {
	u := Usage{
		Invocations: map[string]float64{"gateway": 1, "memory-add-message": 1},
		BilledMS:    map[string]float64{"gateway": 100, "memory-add-message": 50},
		ReadUnits:   2, WriteUnits: 1.5, S3Tier1: 1, S3Tier2: 2, Executions: 1, ExecutionMBMS: 64 * 200, KMSRequests: 1,
	}
	memory := func(fn string) (int, error) {
		return map[string]int{"gateway": 1024, "memory-add-message": 512}[fn], nil
	}
	got, err := Price(u, memory)
	if err != nil {
		t.Fatal(err)
	}
	// By hand, per million calls: 2 invocations at $0.20; 0.1 s at 1 GB and
	// 0.05 s at 0.5 GB = 0.125 GB-s at $0.0000133334; 2 RRU at $0.125 and
	// 1.5 WRU at $0.625; a PUT at $5 and two GETs at $0.40 a million; one
	// execution at $1 plus 64 MB for 200 ms = 0.0125 GB-s at $0.06 a
	// GB-hour; a KMS request at $3 a million.
	want := Costs{
		HTTPAPI: 1, RESTAPI: 3.5,
		LambdaRequests: 0.40, LambdaDuration: 1.666675, DynamoDB: 1.1875, S3: 5.8,
		StepFunctions: 1 + 0.0125*1e6*0.06/3600, KMS: 3,
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("costs mismatch (-want +got):\n%s", diff)
	}
	if b := got.Behind(); math.Abs(b-13.262508333) > 1e-6 {
		t.Errorf("Behind = %v, want 13.262508333", b)
	}
}

func TestPriceRefusesAFunctionWithoutAMemorySize(t *testing.T) {
	_, err := Price(Usage{Invocations: map[string]float64{"nope": 1}, BilledMS: map[string]float64{"nope": 1}}, catalogMemory(catalog.Default()))
	if err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("err = %v, want one naming the function", err)
	}
}

func TestCatalogMemoryKnowsTheGatewayAndEveryFunction(t *testing.T) {
	memory := catalogMemory(catalog.Default())
	for _, fn := range []string{"gateway", "memory-add-message", "vector-retriever", "rag-basic"} {
		if mb, err := memory(fn); err != nil || mb < 128 {
			t.Errorf("memory(%s) = %d, %v", fn, mb, err)
		}
	}
}

func TestIdle(t *testing.T) {
	tests := []struct {
		name, file  string
		wantMonthly float64
		wantErr     []string
	}{
		{"a key, a secret and an alarm are the fixed costs", "testdata/idle.yaml", 1.00 + 0.40 + 0.10, nil},
		{"provisioned capacity is refused", "testdata/provisioned.yaml", 0, []string{"Fn has provisioned concurrency", "Table is not on-demand"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data, err := os.ReadFile(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Idle(data, nil)
			for _, w := range tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v, want one with %q", err, w)
				}
			}
			if tc.wantErr == nil && err != nil {
				t.Fatal(err)
			}
			if math.Abs(got.Monthly-tc.wantMonthly) > 1e-9 {
				t.Errorf("Monthly = %v, want %v (%s)", got.Monthly, tc.wantMonthly, fmt.Sprint(got.Fixed))
			}
		})
	}
}

func TestIdleCountsOnlyTheResourcesAConfigurationCreates(t *testing.T) {
	data, err := os.ReadFile("testdata/conditional.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		params map[string]string
		want   float64
	}{
		{"the defaults create the dashboard and the alarm of either", nil, 3.00 + 0.10},
		{"watching none creates nothing", map[string]string{"Watch": "none"}, 0},
		{"a key without watching creates its secret and the alarm of either", map[string]string{"Watch": "none", "Key": "k"}, 0.40 + 0.10},
		{"a key with watching creates everything", map[string]string{"Key": "k"}, 3.00 + 0.40 + 0.10 + 0.10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Idle(data, tc.params)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got.Monthly-tc.want) > 1e-9 {
				t.Errorf("Monthly = %v, want %v (%s)", got.Monthly, tc.want, fmt.Sprint(got.Fixed))
			}
		})
	}
	if _, err := Idle(data, map[string]string{"Nope": "x"}); err == nil || !strings.Contains(err.Error(), "Nope") {
		t.Errorf("an unknown parameter: err = %v, want one naming it", err)
	}
}

func TestMonitoringNoneLeavesTheTemplateNoDashboardOrAlarm(t *testing.T) {
	data, err := os.ReadFile("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	full, err := Idle(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	none, err := Idle(data, map[string]string{"Monitoring": "none"})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range none.Fixed {
		if strings.HasPrefix(f, "alarm ") || strings.HasPrefix(f, "dashboard ") {
			t.Errorf("Monitoring=none still creates %s", f)
		}
	}
	if full.Monthly-none.Monthly < DashboardPerMonth {
		t.Errorf("Monitoring=none saves $%.2f, want at least the dashboard's $%.2f", full.Monthly-none.Monthly, DashboardPerMonth)
	}
}

func TestIdleOfTheTemplate(t *testing.T) {
	data, err := os.ReadFile("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range Configurations {
		if _, err := Idle(data, c.Parameters); err != nil {
			t.Errorf("%s: the template has a cost at idle this model cannot price: %v", c.Name, err)
		}
	}
}

// TestIdleOfTheTemplateHasOneConnectorKey checks that each way of sealing
// connector credentials creates exactly its own fixed cost: the stack's KMS
// key by default, the key ring's secret with ConnectorKeyMode secret, and
// neither with KmsKeyArn (the customer's key, whichever the mode).
func TestIdleOfTheTemplateHasOneConnectorKey(t *testing.T) {
	data, err := os.ReadFile("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const key = "arn:aws:kms:us-east-1:111122223333:key/00000000-0000-0000-0000-000000000000"
	for _, tc := range []struct {
		name   string
		params map[string]string
		want   []string
	}{
		{"the defaults create the stack's KMS key", nil, []string{"KMS key ConnectorKey"}},
		{"mode kms creates the stack's KMS key", map[string]string{"ConnectorKeyMode": "kms"}, []string{"KMS key ConnectorKey"}},
		{"mode secret creates the key ring's secret", map[string]string{"ConnectorKeyMode": "secret"}, []string{"secret ConnectorKeys"}},
		{"KmsKeyArn creates neither", map[string]string{"KmsKeyArn": key}, nil},
		{"KmsKeyArn with mode secret creates neither", map[string]string{"KmsKeyArn": key, "ConnectorKeyMode": "secret"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Idle(data, tc.params)
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, f := range got.Fixed {
				if strings.HasPrefix(f, "KMS key ") || strings.Contains(f, " ConnectorKey") {
					keys = append(keys, f[:strings.LastIndex(f, " $")])
				}
			}
			if !slices.Equal(keys, tc.want) {
				t.Errorf("connector keys %v, want %v (%s)", keys, tc.want, fmt.Sprint(got.Fixed))
			}
		})
	}
}

// TestKeyStoreSSMWithoutMonitoringIsFreeAtIdle checks the configuration the
// README gives for $0 at idle: no secret, no KMS key, no dashboard or alarm;
// the key rings in SSM parameters, priced at nothing; the sync schedule's
// Lambda requests, a fifth of a cent.
func TestKeyStoreSSMWithoutMonitoringIsFreeAtIdle(t *testing.T) {
	data, err := os.ReadFile("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got, err := Idle(data, map[string]string{"Monitoring": "none", "KeyStore": "ssm", "ConnectorKeyMode": "secret"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Monthly >= 0.005 {
		t.Errorf("Monthly = $%v, want under half a cent (%s)", got.Monthly, fmt.Sprint(got.Fixed))
	}
	for _, f := range got.Fixed {
		if !strings.HasPrefix(f, "schedule ") {
			t.Errorf("a fixed cost remains: %s", f)
		}
	}
	want := []string{"SSM parameter of ConnectorKeysParameter $0.00", "SSM parameter of RequestStateKeysParameter $0.00"}
	if !slices.Equal(got.Free, want) {
		t.Errorf("Free = %v, want the two key rings' parameters %v", got.Free, want)
	}
}

func TestScheduleMonthlyCountsOnlyLambdaRequestsUnderSchedulersFreeInvocations(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want float64
	}{
		// 8,640 runs a month, each a Lambda request at $0.20 a million.
		{"rate(5 minutes)", 8640 * 0.20 / 1e6},
		{"rate(1 hour)", 720 * 0.20 / 1e6},
	} {
		got, err := scheduleMonthly(tc.expr)
		if err != nil || math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("scheduleMonthly(%s) = %v, %v; want %v", tc.expr, got, err, tc.want)
		}
	}
	if _, err := scheduleMonthly("cron(0 * * * ? *)"); err == nil {
		t.Error("a cron schedule was priced; this model prices rate schedules only")
	}
}

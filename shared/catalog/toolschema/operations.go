package toolschema

import (
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/switchboard-dev/switchboard/shared/audit"
	"github.com/switchboard-dev/switchboard/shared/store"
)

// operationsSchemas returns the schemas of the operations family's tools.
func operationsSchemas() map[string]pair {
	return map[string]pair{
		"get_audit_trace": {schemaFor[audit.TraceInput](func(p map[string]*jsonschema.Schema) {
			p["trace_id"].Pattern, p["trace_id"].MaxLength = audit.TracePattern, ptr(128)
			p["limit"].Minimum, p["limit"].Maximum = ptr(1.0), ptr(float64(store.MaxQueryLimit))
		}), schemaFor[audit.TraceOutput](nil)},
	}
}

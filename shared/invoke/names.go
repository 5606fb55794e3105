package invoke

import "strings"

// FunctionName returns the deployed name suffix of the function at path:
// "memory/add_message" becomes "memory-add-message". The template names every
// function <stack>-<suffix>.
func FunctionName(path string) string {
	return strings.NewReplacer("/", "-", "_", "-").Replace(path)
}

// LogicalID returns the template's logical ID of the function at path:
// "memory/add_message" becomes "MemoryAddMessageFunction".
func LogicalID(path string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(path, func(r rune) bool { return r == '/' || r == '_' || r == '-' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	b.WriteString("Function")
	return b.String()
}

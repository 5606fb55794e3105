// Package infra holds what the SAM template is made from or refers to that
// is not Go code. template.yaml.tmpl is the template of template.yaml, which
// shared/deploy renders from the catalog (go run ./scripts/generate).
package infra

import _ "embed"

// Template is the text/template source of template.yaml.
//
//go:embed template.yaml.tmpl
var Template string

// Package tenant names who a request acts for. Every stored key begins with
// the caller's tenant, and the tenant always comes from the authenticated
// principal, never from tool arguments.
package tenant

import (
	"fmt"
	"regexp"
)

// Local is the tenant of an unauthenticated caller on a laptop.
const Local = "local"

// Caller is the authenticated identity a request acts for.
type Caller struct {
	Tenant    string   `json:"tenant"`
	Principal string   `json:"principal"`
	Scopes    []string `json:"scopes,omitempty"`
}

var idPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// Validate checks a tenant id: 1 to 63 lowercase letters, digits and hyphens,
// not starting with a hyphen. Ids never contain the '#' that separates key parts.
func Validate(id string) error {
	if !idPattern.MatchString(id) {
		return fmt.Errorf("tenant id %q must be 1-63 lowercase letters, digits or hyphens, starting with a letter or digit", id)
	}
	return nil
}

// Key returns the key prefix every item of tenant t begins with.
func Key(t string) string { return "t#" + t + "#" }

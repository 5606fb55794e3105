package settings_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/settings"
	"github.com/switchboard-dev/switchboard/shared/vector"
)

func TestTheVectorOptionsAreTheRetrievers(t *testing.T) {
	if diff := cmp.Diff(vector.Modes, settings.Modes); diff != "" {
		t.Errorf("modes mismatch (-vector +settings):\n%s", diff)
	}
	if settings.MaxTopK != vector.MaxTopK || settings.AliasPattern != vector.AliasPattern || settings.DefaultTopK != vector.DefaultTopK {
		t.Errorf("settings bound top_k at %d (default %d) and aliases by %s; vector at %d (default %d) and by %s",
			settings.MaxTopK, settings.DefaultTopK, settings.AliasPattern, vector.MaxTopK, vector.DefaultTopK, vector.AliasPattern)
	}
}

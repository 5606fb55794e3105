package launch

import (
	"runtime"
	"strings"
	"testing"
)

func TestVersionSaysWhichBuildThisIs(t *testing.T) {
	v := version()
	if !strings.HasPrefix(v, "switchboard ") || !strings.HasSuffix(v, runtime.Version()) || !strings.Contains(v, "commit") {
		t.Errorf("version() = %q; want the module version, the commit and the Go version", v)
	}
	if code := Gateway([]string{"--version"}, Extras{}); code != 0 {
		t.Errorf("--version exited %d, want 0 without serving", code)
	}
}

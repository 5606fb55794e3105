package launch

import (
	"fmt"
	"runtime/debug"
)

// version describes the running build from the information the Go
// toolchain stamps into it: the module version (derived from the commit by
// go build in a git checkout, "(devel)" when it cannot be), the commit and
// its time, whether the tree had uncommitted changes, and the Go version.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "switchboard: no build information in this binary"
	}
	s := "switchboard " + bi.Main.Version
	settings := map[string]string{}
	for _, kv := range bi.Settings {
		settings[kv.Key] = kv.Value
	}
	if rev := settings["vcs.revision"]; rev != "" {
		s += fmt.Sprintf(", commit %s", rev)
		if t := settings["vcs.time"]; t != "" {
			s += " of " + t
		}
		if settings["vcs.modified"] == "true" {
			s += " with uncommitted changes"
		}
	} else {
		s += ", commit unknown (go run does not record it; go build does)"
	}
	return s + ", " + bi.GoVersion
}

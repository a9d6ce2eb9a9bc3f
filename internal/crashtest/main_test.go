//go:build unix

package crashtest

import (
	"runtime"
	"testing"

	"github.com/batonhq/baton/engine/exec/clitest"
)

// bins holds the programs TestMain builds from ./testdata: "scripted"
// everywhere, and on Linux "agent" and "host" (the exec engine's).
var bins = map[string]string{}

func TestMain(m *testing.M) {
	names := []string{"scripted"}
	if runtime.GOOS == "linux" {
		names = append(names, "agent", "host")
	}
	clitest.Main(m, bins, names...)
}

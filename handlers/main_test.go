package handlers

import (
	"testing"

	"go.uber.org/goleak"

	"hostcore/sandbox/process/reapertest"
)

// TestMain fails the package if a test leaves a goroutine behind: a
// deleted session or a finished call must not keep anything running.
func TestMain(m *testing.M) {
	reapertest.Prepare() // Bash runs each command under a reaper that is this binary re-executed
	goleak.VerifyTestMain(m)
}

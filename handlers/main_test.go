package handlers

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"hostcore/sandbox/process"
)

// TestMain fails the package if a test leaves a goroutine behind: a
// deleted session or a finished call must not keep anything running.
func TestMain(m *testing.M) {
	// Bash runs each command under a reaper that is this binary re-executed.
	process.MaybeRunReaper()
	if os.Getenv("GORACE") == "" {
		os.Setenv("GORACE", "atexit_sleep_ms=0") // reapers exit at once under -race
	}
	goleak.VerifyTestMain(m)
}

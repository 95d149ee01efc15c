package rpc

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any test leaves a goroutine behind: a
// connection that ended must take its reader, writer and handlers with it.
func TestMain(m *testing.M) {
	// Bash runs each command under a reaper that is this binary
	// re-executed (leak_test.go).
	maybeRunReaper()
	goleak.VerifyTestMain(m)
}

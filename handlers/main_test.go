package handlers

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves a goroutine behind: a
// deleted session or a finished call must not keep anything running.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

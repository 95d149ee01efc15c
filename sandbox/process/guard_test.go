//go:build linux || darwin

package process

import (
	"context"
	"errors"
	"testing"
)

// TestRunRefusesWithoutReaperDispatch: a binary that never called
// MaybeRunReaper must not be re-executed as a reaper (it would run itself
// again for every command).
func TestRunRefusesWithoutReaperDispatch(t *testing.T) {
	reaperCapable.Store(false)
	defer reaperCapable.Store(true)
	_, err := Run(context.Background(), Spec{Path: "/bin/true"})
	if !errors.Is(err, ErrNoReaper) {
		t.Fatalf("Run without MaybeRunReaper: %v, want ErrNoReaper", err)
	}
}
